#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "validation/attention_batch.h"
#include "validation/cpu_reference.h"

namespace sv = servesim::validation;
using sv::ElementType;

namespace {

std::vector<std::uint16_t> to_bits(ElementType type, const std::vector<float>& values) {
  std::vector<std::uint16_t> bits;
  for (const float v : values)
    bits.push_back(sv::float_to_bits(type, v));
  return bits;
}

}  // namespace

TEST_CASE("random elements lie between -1 and 1 and are fresh per seed",
          "[validation][reference]") {
  const auto a = sv::random_elements(ElementType::BF16, 10000, 1);
  const auto b = sv::random_elements(ElementType::BF16, 10000, 2);
  CHECK(a != b);
  CHECK(a == sv::random_elements(ElementType::BF16, 10000, 1));
  double sum = 0.0;
  for (const std::uint16_t bits : a) {
    const float v = sv::bits_to_float(ElementType::BF16, bits);
    CHECK(v >= -1.0f);
    CHECK(v <= 1.0f);  // rounding to bf16 may reach 1.0
    sum += v;
  }
  CHECK(std::fabs(sum / 10000) < 0.03);
}

TEST_CASE("reference GEMM entry is a row of A against a row of W", "[validation][reference]") {
  // A = [[1, 2, 3], [4, 5, 6]] (2 x 3); W = [[1, 0, -1], [0.5, 0.5, 0.5]] (2 x 3).
  const auto a = to_bits(ElementType::FP16, {1, 2, 3, 4, 5, 6});
  const auto w = to_bits(ElementType::FP16, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  CHECK(sv::reference_gemm_entry(ElementType::FP16, a, w, 3, 0, 0) == -2.0f);
  CHECK(sv::reference_gemm_entry(ElementType::FP16, a, w, 3, 0, 1) == 3.0f);
  CHECK(sv::reference_gemm_entry(ElementType::FP16, a, w, 3, 1, 0) == -2.0f);
  CHECK(sv::reference_gemm_entry(ElementType::FP16, a, w, 3, 1, 1) == 7.5f);
}

TEST_CASE("reference attention weights values by the softmax of scaled scores",
          "[validation][reference]") {
  const ElementType type = ElementType::FP16;
  // One sequence of 2 tokens, 2 query heads sharing 1 KV head (GQA), head_dim 4.
  const sv::HeadShape heads{2, 1, 4};
  const std::vector<std::int64_t> contexts{2};
  const sv::KvLayout layout = sv::KvLayout::contiguous(contexts);
  const auto q = to_bits(type, {1, 0, 0, 0, 0, 0, 0, 0});  // head 0 looks at e0, head 1 at nothing
  const auto k = to_bits(type, {2, 0, 0, 0, 0, 0, 0, 0});  // token 0 scores 2/sqrt(4) = 1
  const auto v = to_bits(type, {1, 2, 3, 4, 5, 6, 7, 8});
  const sv::AttentionQuery query{0, 2};

  const auto head0 = sv::reference_attention(type, heads, q, 8, 0, query, 0, layout, k, v);
  const float w0 = std::exp(1.0f) / (std::exp(1.0f) + 1.0f);
  REQUIRE(head0.size() == 4);
  for (std::size_t e = 0; e < 4; ++e) {
    const double i = static_cast<double>(e);
    CHECK(head0[e] == Approx(w0 * (1 + i) + (1 - w0) * (5 + i)));
  }
  // Equal scores: the plain mean of the values.
  const auto head1 = sv::reference_attention(type, heads, q, 8, 0, query, 1, layout, k, v);
  CHECK(head1[0] == Approx(3.0));
  CHECK(head1[3] == Approx(6.0));
  // A causal query over the first key only returns that key's value.
  const auto first = sv::reference_attention(type, heads, q, 8, 0, {0, 1}, 0, layout, k, v);
  CHECK(first[2] == 3.0f);
}

TEST_CASE("reference attention reads the same values through a paged layout",
          "[validation][reference]") {
  const ElementType type = ElementType::BF16;
  const sv::HeadShape heads{4, 2, 8};
  const std::vector<std::int64_t> contexts{21, 7};
  const std::int64_t row = heads.num_kv_heads * heads.head_dim;
  const sv::KvLayout contiguous = sv::KvLayout::contiguous(contexts);
  const sv::KvLayout paged = sv::KvLayout::paged(contexts, 4, 3);
  const auto k = sv::random_elements(type, static_cast<std::size_t>(28 * row), 11);
  const auto v = sv::random_elements(type, static_cast<std::size_t>(28 * row), 12);
  const auto k_paged = sv::relayout(k, contiguous, paged, row);
  const auto v_paged = sv::relayout(v, contiguous, paged, row);
  const auto q = sv::random_elements(type, 2 * 32, 13);
  const auto queries = sv::decode_queries(contexts);
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t h = 0; h < 4; ++h) {
      const sv::AttentionQuery& query = queries[static_cast<std::size_t>(i)];
      CHECK(sv::reference_attention(type, heads, q, 32, i, query, h, contiguous, k, v) ==
            sv::reference_attention(type, heads, q, 32, i, query, h, paged, k_paged, v_paged));
    }
  }
  // Reading the paged buffer as if it were contiguous gives other numbers.
  const sv::KvLayout wrong =
      sv::KvLayout::contiguous(std::vector<std::int64_t>{paged.total_rows() - 7, 7});
  CHECK(sv::reference_attention(type, heads, q, 32, 0, queries[0], 0, wrong, k_paged, v_paged) !=
        sv::reference_attention(type, heads, q, 32, 0, queries[0], 0, contiguous, k, v));
}

TEST_CASE("tolerance check finds the worst element and fails NaN", "[validation][reference]") {
  const std::vector<float> expected{1.0f, -2.0f, 0.0f, 4.0f};
  CHECK(sv::compare_to_reference(expected, expected, 1e-3).passed());
  CHECK(sv::compare_to_reference(expected, expected, 1e-3).worst_ratio == 0.0);

  std::vector<float> actual = expected;
  actual[1] = -2.001f;  // 1e-3 off, allowed 1e-2 x (2 + rms 2.29)
  CHECK(sv::compare_to_reference(actual, expected, 1e-2).passed());
  actual[3] = 4.5f;
  const sv::ToleranceReport report = sv::compare_to_reference(expected, actual, 1e-2);
  CHECK_FALSE(report.passed());
  CHECK(report.worst_index == 3);
  CHECK(report.expected == 4.0);
  CHECK(report.actual == 4.5);
  CHECK(report.checked == 4);

  // Near zero the rms term carries the tolerance: a small error on a zero entry passes.
  actual = expected;
  actual[2] = 1e-3f;
  CHECK(sv::compare_to_reference(expected, actual, 1e-2).passed());

  actual = expected;
  actual[0] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(sv::compare_to_reference(expected, actual, 1.0).passed());
  actual[0] = std::numeric_limits<float>::infinity();
  CHECK_FALSE(sv::compare_to_reference(expected, actual, 1.0).passed());
  CHECK_THROWS(sv::compare_to_reference(expected, std::vector<float>{1.0f}, 1.0));
}

TEST_CASE("reference norm and activation match their formulas", "[validation][reference]") {
  const std::vector<float> row{3.0f, -4.0f};  // mean square 12.5
  const auto normed = sv::reference_rms_norm(row);
  REQUIRE(normed.size() == 2);
  CHECK(normed[0] == Approx(3.0 / std::sqrt(12.5 + 1e-5)));
  CHECK(normed[1] == Approx(-4.0 / std::sqrt(12.5 + 1e-5)));
  CHECK(sv::reference_silu_mul(0.0f, 5.0f) == 0.0f);
  CHECK(sv::reference_silu_mul(2.0f, 3.0f) == Approx(2.0 / (1.0 + std::exp(-2.0)) * 3.0));
  CHECK(sv::reference_silu_mul(-20.0f, 1.0f) == Approx(0.0).margin(1e-6));
}

TEST_CASE("a failed matrix check names the sampled entry's row and column",
          "[validation][reference]") {
  servesim::validation::ToleranceReport report;
  report.worst_index = 1;
  report.expected = 2.5;
  report.actual = 3.0;
  const std::vector<std::size_t> entries{5, 13};
  CHECK(servesim::validation::matrix_mismatch(report, entries, 4) ==
        "verification failed at C[3][1]: expected 2.500000, got 3.000000");
}
