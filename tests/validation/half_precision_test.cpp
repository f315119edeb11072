#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "sim/core/error.h"
#include "validation/half_precision.h"

namespace sv = servesim::validation;
using sv::ElementType;

TEST_CASE("fp16 conversion matches IEEE binary16 on known values", "[validation][half]") {
  CHECK(sv::float_to_bits(ElementType::FP16, 1.0f) == 0x3C00);
  CHECK(sv::float_to_bits(ElementType::FP16, -2.0f) == 0xC000);
  CHECK(sv::float_to_bits(ElementType::FP16, 65504.0f) == 0x7BFF);
  CHECK(sv::float_to_bits(ElementType::FP16, 65520.0f) == 0x7C00);  // rounds to infinity
  CHECK(sv::float_to_bits(ElementType::FP16, 0x1p-24f) == 0x0001);  // smallest subnormal
  CHECK(sv::float_to_bits(ElementType::FP16, 0.0f) == 0x0000);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  CHECK(sv::float_to_bits(ElementType::FP16, 1.0f + 0x1p-11f) == 0x3C00);
  CHECK(sv::float_to_bits(ElementType::FP16, 1.0f + 3 * 0x1p-11f) == 0x3C02);
  CHECK(
      std::isnan(sv::bits_to_float(ElementType::FP16, sv::float_to_bits(ElementType::FP16, NAN))));
  CHECK(sv::bits_to_float(ElementType::FP16, 0x3555) == Approx(0.333251953125));
}

TEST_CASE("bf16 conversion keeps the top half of the float, rounded to even",
          "[validation][half]") {
  CHECK(sv::float_to_bits(ElementType::BF16, 1.0f) == 0x3F80);
  CHECK(sv::float_to_bits(ElementType::BF16, -1.0f) == 0xBF80);
  CHECK(sv::float_to_bits(ElementType::BF16, 1.0f + 0x1p-8f) == 0x3F80);      // tie: even
  CHECK(sv::float_to_bits(ElementType::BF16, 1.0f + 3 * 0x1p-8f) == 0x3F82);  // tie: even
  CHECK(sv::float_to_bits(ElementType::BF16, 1.0f + 0x1p-8f + 0x1p-20f) == 0x3F81);
  CHECK(sv::bits_to_float(ElementType::BF16, 0x4049) == 3.140625f);
  CHECK(
      std::isnan(sv::bits_to_float(ElementType::BF16, sv::float_to_bits(ElementType::BF16, NAN))));
}

TEST_CASE("every finite 16-bit pattern survives a round trip through float", "[validation][half]") {
  for (const ElementType type : {ElementType::FP16, ElementType::BF16}) {
    int failures = 0;
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      const float value = sv::bits_to_float(type, static_cast<std::uint16_t>(bits));
      if (std::isnan(value)) continue;
      failures += sv::float_to_bits(type, value) == bits ? 0 : 1;
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("element types parse by name and have a tolerance each", "[validation][half]") {
  CHECK(sv::parse_element_type("fp16", "--dtype") == ElementType::FP16);
  CHECK(sv::parse_element_type("Half", "--dtype") == ElementType::FP16);
  CHECK(sv::parse_element_type("BF16", "--dtype") == ElementType::BF16);
  CHECK(sv::parse_element_type("bfloat16", "--dtype") == ElementType::BF16);
  CHECK(sv::element_type_name(ElementType::BF16) == "bf16");
  CHECK_THROWS_WITH(sv::parse_element_type("fp8", "--dtype"),
                    Catch::Contains("--dtype") && Catch::Contains("fp8"));
  CHECK_THROWS_AS(sv::parse_element_type("fp32", "--dtype"), servesim::UsageError);
  // bf16 has 3 fewer mantissa bits, so 8 times the tolerance.
  CHECK(sv::relative_tolerance(ElementType::BF16) == 8 * sv::relative_tolerance(ElementType::FP16));
  CHECK(sv::relative_tolerance(ElementType::FP16) < 0.005);
}
