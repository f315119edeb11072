#include "validation/quantized_formats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/core/error.h"

namespace servesim::validation {

std::string_view weight_format_name(WeightFormat format) noexcept {
  return format == WeightFormat::Int4 ? "int4" : "fp8";
}

WeightFormat parse_weight_format(std::string_view name, std::string_view flag) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "int4") return WeightFormat::Int4;
  if (lower == "fp8" || lower == "e4m3") return WeightFormat::Fp8;
  throw UsageError(std::string(flag) + " expects int4 or fp8, got '" + std::string(name) + "'");
}

float fp8_e4m3_to_float(std::uint8_t bits) noexcept {
  const float sign = (bits & 0x80u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);  // subnormal
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
}

std::vector<std::uint32_t> pack_int4(std::span<const std::uint8_t> codes, std::int64_t k) {
  if (k <= 0 || k % kInt4PerWord != 0 || codes.size() % static_cast<std::size_t>(k) != 0) {
    throw std::invalid_argument("pack_int4: k must be a positive multiple of 8 dividing the codes");
  }
  std::vector<std::uint32_t> packed(codes.size() / kInt4PerWord, 0u);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] > 15) throw std::invalid_argument("pack_int4: a code above 15");
    packed[i / kInt4PerWord] |= std::uint32_t{codes[i]} << (4 * (i % kInt4PerWord));
  }
  return packed;
}

std::uint8_t int4_code(std::span<const std::uint32_t> packed, std::int64_t k, std::int64_t row,
                       std::int64_t col) noexcept {
  const std::int64_t index = row * k + col;
  const std::uint32_t word = packed[static_cast<std::size_t>(index / kInt4PerWord)];
  return static_cast<std::uint8_t>((word >> (4 * (index % kInt4PerWord))) & 0xFu);
}

float dequantize_int4(const Int4Weights& weights, std::int64_t row, std::int64_t col) noexcept {
  const std::int64_t groups = weights.k / weights.group_size;
  const std::uint16_t scale =
      weights.scale_bits[static_cast<std::size_t>(row * groups + col / weights.group_size)];
  const std::int32_t q = int4_code(weights.packed, weights.k, row, col);
  return static_cast<float>(q - kInt4ZeroPoint) * bits_to_float(weights.scale_type, scale);
}

std::uint64_t weight_bytes(WeightFormat format, std::int64_t n, std::int64_t k,
                           std::int64_t group_size) noexcept {
  const auto elements = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(k);
  if (format == WeightFormat::Fp8) return elements;
  return elements / 2 + 2 * (elements / static_cast<std::uint64_t>(group_size));
}

}  // namespace servesim::validation
