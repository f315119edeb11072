#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace servesim::validation {

// The 16-bit formats the harness measures. Host code holds their values as raw bits, so the
// CPU references and tests need no CUDA header; the device reinterprets the same bits as
// __half or __nv_bfloat16.
enum class ElementType { FP16, BF16 };

std::string_view element_type_name(ElementType type) noexcept;  // "fp16" or "bf16"

// Accepts "fp16" and "bf16" (any case, also float16, half, bfloat16); throws UsageError
// naming `flag` and the valid names otherwise.
ElementType parse_element_type(std::string_view name, std::string_view flag);

// Round to nearest even, as the device conversions do; overflow goes to infinity, NaN stays
// NaN. fp16 subnormals are kept.
std::uint16_t float_to_bits(ElementType type, float value) noexcept;
float bits_to_float(ElementType type, std::uint16_t bits) noexcept;

// Relative tolerance of a kernel result against its fp32-accumulating CPU reference: a few
// units in the last place of the output format, which is rounded once at the end.
double relative_tolerance(ElementType type) noexcept;

}  // namespace servesim::validation
