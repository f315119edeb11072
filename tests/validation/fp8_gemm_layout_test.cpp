#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "validation/cpu_reference.h"
#include "validation/fp8_gemm_layout.h"
#include "validation/half_precision.h"
#include "validation/quantized_formats.h"

namespace sv = servesim::validation;
using sv::ColumnMajorMatrix;

namespace {

// Element (row, col) of a column-major matrix stored in `buffer`, as cuBLASLt reads it.
float element(const std::vector<std::uint8_t>& buffer, const ColumnMajorMatrix& matrix,
              std::int64_t row, std::int64_t col) {
  REQUIRE(row < matrix.rows);
  REQUIRE(col < matrix.cols);
  return sv::fp8_e4m3_to_float(buffer.at(static_cast<std::size_t>(row + col * matrix.ld)));
}

// What cuBLASLt computes from the descriptors: D = (w_scale op(A)) . (a_scale B) with op(A) the
// weights transposed (TRANSA = T, TRANSB = N), D stored column-major with the output's
// leading dimension.
std::vector<float> column_major_product(const sv::Fp8LtOperands& ops,
                                        const std::vector<std::uint8_t>& weights,
                                        const std::vector<std::uint8_t>& activations,
                                        float activation_scale, float weight_scale) {
  // op(A) is weights.cols x weights.rows; it must meet B and D.
  REQUIRE(ops.weights.cols == ops.output.rows);
  REQUIRE(ops.weights.rows == ops.activations.rows);
  REQUIRE(ops.activations.cols == ops.output.cols);
  for (const ColumnMajorMatrix& m : {ops.weights, ops.activations, ops.output})
    REQUIRE(m.ld >= m.rows);
  std::vector<float> d(static_cast<std::size_t>(ops.output.ld * ops.output.cols), 0.0f);
  for (std::int64_t r = 0; r < ops.output.rows; ++r) {
    for (std::int64_t c = 0; c < ops.output.cols; ++c) {
      float sum = 0.0f;
      for (std::int64_t l = 0; l < ops.weights.rows; ++l)
        sum += element(weights, ops.weights, l, r) * element(activations, ops.activations, l, c);
      d[static_cast<std::size_t>(r + c * ops.output.ld)] = sum * (activation_scale * weight_scale);
    }
  }
  return d;
}

std::vector<std::uint8_t> random_fp8(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint8_t> bytes(count);
  for (std::uint8_t& byte : bytes)
    byte = static_cast<std::uint8_t>(sv::next_random(seed) >> 56) & sv::kFp8FiniteMask;
  return bytes;
}

}  // namespace

TEST_CASE("the cuBLASLt FP8 operands are the serving layout read column-major, TN",
          "[validation][fp8_gemm]") {
  const sv::Fp8LtOperands ops = sv::fp8_lt_operands(3, 32, 48);
  CHECK(ops.weights.rows == 48);  // W [32 x 48] row-major: 48 x 32 column-major, ld 48
  CHECK(ops.weights.cols == 32);
  CHECK(ops.weights.ld == 48);
  CHECK(ops.activations.rows == 48);  // A [3 x 48] row-major: 48 x 3, ld 48
  CHECK(ops.activations.cols == 3);
  CHECK(ops.activations.ld == 48);
  CHECK(ops.output.rows == 32);  // C [3 x 32] row-major: 32 x 3, ld 32
  CHECK(ops.output.cols == 3);
  CHECK(ops.output.ld == 32);
}

TEST_CASE("the cuBLASLt FP8 product through those descriptors is the CPU reference's",
          "[validation][fp8_gemm][reference]") {
  const std::int64_t m = 3, n = 32, k = 48;
  const auto a = random_fp8(static_cast<std::size_t>(m * k), 11);
  const auto w = random_fp8(static_cast<std::size_t>(n * k), 12);
  const float a_scale = sv::kFp8TestActivationScale;
  const float w_scale = sv::kFp8TestWeightScale;
  const std::vector<float> d =
      column_major_product(sv::fp8_lt_operands(m, n, k), w, a, a_scale, w_scale);
  std::vector<float> expected;
  std::vector<float> as_bf16;    // the output as the kernel stores it
  std::vector<float> one_scale;  // a kernel that dropped the weights' scale
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const float reference = sv::reference_fp8_gemm_entry(a, w, k, a_scale, w_scale, i, j);
      const float product = d[static_cast<std::size_t>(i * n + j)];  // row-major C[i][j]
      CHECK(product == reference);
      expected.push_back(reference);
      const auto bits = sv::float_to_bits(sv::ElementType::BF16, product);
      as_bf16.push_back(sv::bits_to_float(sv::ElementType::BF16, bits));
      one_scale.push_back(product / w_scale);
    }
  }
  const double rtol = sv::relative_tolerance(sv::ElementType::BF16);
  CHECK(sv::compare_to_reference(expected, as_bf16, rtol).passed());
  CHECK_FALSE(sv::compare_to_reference(expected, one_scale, rtol).passed());
  // Transposed the other way (the weights read as n x k with ld n), entries move and fail.
  std::vector<float> misread;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (std::int64_t l = 0; l < k; ++l) {
        sum += sv::fp8_e4m3_to_float(a[static_cast<std::size_t>(i * k + l)]) *
               sv::fp8_e4m3_to_float(w[static_cast<std::size_t>(j + l * n)]);
      }
      misread.push_back(sum * a_scale * w_scale);
    }
  }
  CHECK_FALSE(sv::compare_to_reference(expected, misread, rtol).passed());
}

TEST_CASE("cuBLASLt FP8 shapes need n and k in multiples of 16, not m", "[validation][fp8_gemm]") {
  const sv::GemmShape fits{"qkv", 1, 6144, 4096, sv::ElementType::BF16, true};
  CHECK_FALSE(sv::fp8_lt_shape_problem(fits).has_value());
  const sv::GemmShape odd_n{"qkv", 16, 1000, 4096, sv::ElementType::BF16, true};
  REQUIRE(sv::fp8_lt_shape_problem(odd_n).has_value());
  CHECK_THAT(*sv::fp8_lt_shape_problem(odd_n),
             Catch::StartsWith("qkv has n = 1000, not a multiple of 16"));
  const sv::GemmShape odd_k{"mlp_down", 16, 4096, 14344, sv::ElementType::BF16, true};
  REQUIRE(sv::fp8_lt_shape_problem(odd_k).has_value());
  CHECK_THAT(*sv::fp8_lt_shape_problem(odd_k),
             Catch::StartsWith("mlp_down has k = 14344, not a multiple of 16"));
  CHECK(sv::fp8_lt_padded_rows(1) == 16);
  CHECK(sv::fp8_lt_padded_rows(16) == 16);
  CHECK(sv::fp8_lt_padded_rows(17) == 32);
  CHECK(sv::fp8_lt_padded_rows(8192) == 8192);
}
