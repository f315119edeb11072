#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "validation/half_precision.h"

namespace servesim::validation {

// The narrow weight formats `quant-gemm` measures, with the semantics of the kernels serving
// engines run for them:
//   Int4: weight-only, GPTQ/Marlin-style symmetric int4. Codes q in [0, 15] packed eight to a
//         32-bit word, a 16-bit scale (the activations' format) per group of `group_size`
//         consecutive k of one output row; the weight is (q - 8) x scale, dequantised inside
//         the kernel and multiplied with 16-bit activations.
//   Fp8:  e4m3 weights and activations, one fp32 scale per tensor each, fp32 accumulation,
//         the product scaled by both and rounded once to the 16-bit output format.
enum class WeightFormat { Int4, Fp8 };

std::string_view weight_format_name(WeightFormat format) noexcept;  // "int4" or "fp8"

// Accepts "int4" and "fp8" (any case; also "e4m3" for fp8); throws UsageError naming `flag`
// and the valid names otherwise.
WeightFormat parse_weight_format(std::string_view name, std::string_view flag);

// --- fp8 e4m3 (OCP FP8: 1 sign, 4 exponent bits biased by 7, 3 mantissa bits; no infinities,
// S.1111.111 is NaN, the largest finite magnitude is 448).
float fp8_e4m3_to_float(std::uint8_t bits) noexcept;

// Random fp8 test data keeps bit 6 clear: the exponent stays below 8, so every value is finite
// (|x| < 2) and NaN (0x7F, 0xFF) cannot occur. The device fill applies the same mask.
inline constexpr std::uint8_t kFp8FiniteMask = 0xBF;

// Per-tensor scales of the fp8 test data (quant-gemm's fp8 kernel, gemm --dtype fp8): not 1, so a
// kernel that dropped either would fail its check.
inline constexpr float kFp8TestActivationScale = 0.5f;
inline constexpr float kFp8TestWeightScale = 0.25f;

// --- int4: a row-major [n x k] matrix of codes packs into n x k / 8 words; element c of a row
// sits in word c / 8 at bits 4 (c % 8) .. 4 (c % 8) + 3, the low nibble first.
inline constexpr std::int64_t kInt4PerWord = 8;
inline constexpr std::int32_t kInt4ZeroPoint = 8;

// Packs codes (each in [0, 15]) of a row-major matrix with `k` columns; throws
// std::invalid_argument unless k is a positive multiple of 8 dividing codes.size(), or a code
// is above 15.
std::vector<std::uint32_t> pack_int4(std::span<const std::uint8_t> codes, std::int64_t k);

// The code of element (row, col) of a packed matrix with `k` columns.
std::uint8_t int4_code(std::span<const std::uint32_t> packed, std::int64_t k, std::int64_t row,
                       std::int64_t col) noexcept;

// Per-group scales of a packed [n x k] int4 matrix: scale_bits[row x (k / group_size) +
// col / group_size], 16-bit values of `scale_type`.
struct Int4Weights {
  std::span<const std::uint32_t> packed;
  std::span<const std::uint16_t> scale_bits;
  ElementType scale_type = ElementType::BF16;
  std::int64_t k = 0;
  std::int64_t group_size = 128;
};

// The dequantised weight (q - 8) x scale of element (row, col), in fp32 as the kernel computes it.
float dequantize_int4(const Int4Weights& weights, std::int64_t row, std::int64_t col) noexcept;

// Bytes the weights of an [n x k] matrix occupy in `format`, scales included (int4: n k / 2 bytes
// of codes plus n k / group_size 16-bit scales; fp8: n k).
std::uint64_t weight_bytes(WeightFormat format, std::int64_t n, std::int64_t k,
                           std::int64_t group_size) noexcept;

}  // namespace servesim::validation
