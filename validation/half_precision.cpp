#include "validation/half_precision.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>

#include "sim/core/error.h"

namespace servesim::validation {
namespace {

std::uint16_t float_to_bf16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  // Adding 0x7FFF plus the lowest kept bit rounds to nearest, ties to even.
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float bf16_to_float(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(std::uint32_t{bits} << 16);
}

std::uint16_t float_to_fp16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | 0x7E00u);
  if (magnitude >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to inf
  if (magnitude < 6.103515625e-05f) {
    // Subnormal (or zero): a multiple of 2^-24; nearbyint rounds ties to even.
    const auto units = static_cast<std::uint16_t>(std::nearbyint(magnitude * 16777216.0f));
    return static_cast<std::uint16_t>(sign | units);
  }
  const std::uint32_t exponent = ((bits >> 23) & 0xFFu) - 127u + 15u;
  const std::uint32_t mantissa = bits & 0x7FFFFFu;
  std::uint32_t half = (exponent << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into exponent
  return static_cast<std::uint16_t>(sign | half);
}

float fp16_to_float(std::uint16_t bits) noexcept {
  const float sign = (bits & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return mantissa == 0 ? sign * INFINITY : NAN;
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

}  // namespace

std::string_view element_type_name(ElementType type) noexcept {
  return type == ElementType::FP16 ? "fp16" : "bf16";
}

ElementType parse_element_type(std::string_view name, std::string_view flag) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "fp16" || lower == "float16" || lower == "half") return ElementType::FP16;
  if (lower == "bf16" || lower == "bfloat16") return ElementType::BF16;
  throw UsageError(std::string(flag) + " expects fp16 or bf16, got '" + std::string(name) + "'");
}

std::uint16_t float_to_bits(ElementType type, float value) noexcept {
  return type == ElementType::FP16 ? float_to_fp16(value) : float_to_bf16(value);
}

float bits_to_float(ElementType type, std::uint16_t bits) noexcept {
  return type == ElementType::FP16 ? fp16_to_float(bits) : bf16_to_float(bits);
}

double relative_tolerance(ElementType type) noexcept {
  // One rounding of the output costs half an ulp (2^-11 fp16, 2^-8 bf16); summation order
  // and exp() differences between device and host add a little. Four ulps leaves margin
  // without letting a wrong index or a missing term through.
  return type == ElementType::FP16 ? 4.0 * 0x1p-10 : 4.0 * 0x1p-7;
}

}  // namespace servesim::validation
