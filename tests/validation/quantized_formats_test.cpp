#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "sim/core/error.h"
#include "validation/cpu_reference.h"
#include "validation/quantized_formats.h"

namespace sv = servesim::validation;
using sv::ElementType;

TEST_CASE("fp8 e4m3 decodes the OCP bit patterns", "[validation][quantized]") {
  CHECK(sv::fp8_e4m3_to_float(0x00) == 0.0f);
  CHECK(std::signbit(sv::fp8_e4m3_to_float(0x80)));
  CHECK(sv::fp8_e4m3_to_float(0x38) == 1.0f);   // exponent 7 = bias
  CHECK(sv::fp8_e4m3_to_float(0xB8) == -1.0f);  // the sign bit
  CHECK(sv::fp8_e4m3_to_float(0x3C) == 1.5f);   // mantissa 4/8
  CHECK(sv::fp8_e4m3_to_float(0x40) == 2.0f);
  CHECK(sv::fp8_e4m3_to_float(0x7E) == 448.0f);                // the largest finite value
  CHECK(sv::fp8_e4m3_to_float(0x08) == std::ldexp(1.0f, -6));  // the smallest normal
  CHECK(sv::fp8_e4m3_to_float(0x01) == std::ldexp(1.0f, -9));  // the smallest subnormal
  CHECK(sv::fp8_e4m3_to_float(0x07) == 7 * std::ldexp(1.0f, -9));
  CHECK(std::isnan(sv::fp8_e4m3_to_float(0x7F)));
  CHECK(std::isnan(sv::fp8_e4m3_to_float(0xFF)));
  // e4m3 has no infinities: 0x78 (all-ones exponent, mantissa 0) is the finite 256.
  CHECK(sv::fp8_e4m3_to_float(0x78) == 256.0f);
}

TEST_CASE("the fp8 fill mask keeps every value finite and below 2", "[validation][quantized]") {
  std::set<float> values;
  for (unsigned byte = 0; byte < 256; ++byte) {
    const float x = sv::fp8_e4m3_to_float(static_cast<std::uint8_t>(byte) & sv::kFp8FiniteMask);
    REQUIRE(std::isfinite(x));
    CHECK(std::fabs(x) < 2.0f);
    values.insert(x);
  }
  // Seven free bits: 128 patterns, of which +0 and -0 compare equal.
  CHECK(values.size() == 127);
}

TEST_CASE("int4 codes pack eight to a word, low nibble first", "[validation][quantized]") {
  const std::vector<std::uint8_t> codes{1, 2, 3, 4, 5, 6, 7, 8, 15, 0, 0, 0, 0, 0, 0, 9};
  const auto packed = sv::pack_int4(codes, 8);
  REQUIRE(packed.size() == 2);
  CHECK(packed[0] == 0x87654321u);
  CHECK(packed[1] == 0x9000000Fu);
  for (std::int64_t row = 0; row < 2; ++row) {
    for (std::int64_t col = 0; col < 8; ++col) {
      CHECK(sv::int4_code(packed, 8, row, col) == codes[static_cast<std::size_t>(row * 8 + col)]);
    }
  }
  // A 3 x 16 matrix: rows span two words each.
  std::vector<std::uint8_t> wide(48);
  for (std::size_t i = 0; i < wide.size(); ++i)
    wide[i] = static_cast<std::uint8_t>((i * 7 + 3) % 16);
  const auto wide_packed = sv::pack_int4(wide, 16);
  CHECK(wide_packed.size() == 6);
  CHECK(sv::int4_code(wide_packed, 16, 2, 9) == wide[2 * 16 + 9]);
  CHECK(sv::int4_code(wide_packed, 16, 1, 15) == wide[1 * 16 + 15]);

  CHECK_THROWS_AS(sv::pack_int4(std::vector<std::uint8_t>(12, 0), 6), std::invalid_argument);
  CHECK_THROWS_AS(sv::pack_int4(std::vector<std::uint8_t>(12, 0), 8), std::invalid_argument);
  CHECK_THROWS_AS(sv::pack_int4(std::vector<std::uint8_t>{16, 0, 0, 0, 0, 0, 0, 0}, 8),
                  std::invalid_argument);
}

TEST_CASE("int4 dequantises to (q - 8) x the scale of its group", "[validation][quantized]") {
  // Two rows of 16 codes, groups of 8: row 0 scales 0.5 and 2, row 1 scales 0.25 and -1.
  std::vector<std::uint8_t> codes(32, 8);
  codes[3] = 12;        // row 0, group 0: (12 - 8) x 0.5
  codes[9] = 1;         // row 0, group 1: (1 - 8) x 2
  codes[16 + 0] = 0;    // row 1, group 0: -8 x 0.25
  codes[16 + 15] = 15;  // row 1, group 1: 7 x -1
  const auto packed = sv::pack_int4(codes, 16);
  std::vector<std::uint16_t> scales;
  for (const float s : {0.5f, 2.0f, 0.25f, -1.0f})
    scales.push_back(sv::float_to_bits(ElementType::BF16, s));
  const sv::Int4Weights w{packed, scales, ElementType::BF16, 16, 8};
  CHECK(sv::dequantize_int4(w, 0, 3) == 2.0f);
  CHECK(sv::dequantize_int4(w, 0, 9) == -14.0f);
  CHECK(sv::dequantize_int4(w, 0, 0) == 0.0f);  // the zero point
  CHECK(sv::dequantize_int4(w, 1, 0) == -2.0f);
  CHECK(sv::dequantize_int4(w, 1, 15) == -7.0f);
  CHECK(sv::dequantize_int4(w, 1, 8) == 0.0f);
}

TEST_CASE("quantized GEMM references against hand sums", "[validation][quantized][reference]") {
  // int4: one row, codes 9 7 8 8 8 8 8 10 at scale 0.5 are the weights 0.5 -0.5 0 ... 0 1.
  const std::vector<std::uint8_t> codes{9, 7, 8, 8, 8, 8, 8, 10};
  const auto packed = sv::pack_int4(codes, 8);
  const std::vector<std::uint16_t> scale{sv::float_to_bits(ElementType::FP16, 0.5f)};
  std::vector<std::uint16_t> a;
  for (int i = 1; i <= 8; ++i)
    a.push_back(sv::float_to_bits(ElementType::FP16, static_cast<float>(i)));
  const sv::Int4Weights w{packed, scale, ElementType::FP16, 8, 8};
  CHECK(sv::reference_int4_gemm_entry(a, w, 0, 0) == 7.5f);  // 0.5 x 1 - 0.5 x 2 + 1 x 8

  // fp8: (1 x 1.5 + 2 x -1) x 0.5 x 0.25.
  const std::vector<std::uint8_t> a8{0x38, 0x40};
  const std::vector<std::uint8_t> w8{0x3C, 0xB8};
  CHECK(sv::reference_fp8_gemm_entry(a8, w8, 2, 0.5f, 0.25f, 0, 0) == -0.0625f);
}

TEST_CASE("weight bytes count codes and scales", "[validation][quantized]") {
  CHECK(sv::weight_bytes(sv::WeightFormat::Fp8, 4096, 4096, 128) == 16777216u);
  // 4096 x 4096 / 2 bytes of codes and 4096 x 32 two-byte scales.
  CHECK(sv::weight_bytes(sv::WeightFormat::Int4, 4096, 4096, 128) == 8388608u + 262144u);
}

TEST_CASE("weight formats parse by name and name the flag when they do not",
          "[validation][quantized]") {
  CHECK(sv::parse_weight_format("INT4", "--formats") == sv::WeightFormat::Int4);
  CHECK(sv::parse_weight_format("e4m3", "--formats") == sv::WeightFormat::Fp8);
  CHECK(sv::weight_format_name(sv::WeightFormat::Fp8) == "fp8");
  CHECK_THROWS_WITH(sv::parse_weight_format("int8", "--formats"),
                    "--formats expects int4 or fp8, got 'int8'");
  CHECK_THROWS_AS(sv::parse_weight_format("", "--formats"), servesim::UsageError);
}

TEST_CASE("sampled output entries cover small outputs and spread over large ones",
          "[validation][reference]") {
  CHECK(sv::sampled_entries(5) == std::vector<std::size_t>{0, 1, 2, 3, 4});
  const auto entries = sv::sampled_entries(1'000'000, 100);
  REQUIRE(entries.size() == 102);
  CHECK(entries[100] == 0);
  CHECK(entries[101] == 999'999);
  const std::set<std::size_t> distinct(entries.begin(), entries.end() - 2);
  CHECK(distinct.size() == 100);
  for (const std::size_t e : entries)
    CHECK(e < 1'000'000);
}
