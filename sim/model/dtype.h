#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace servesim {

// Numeric formats for weights, activations and the KV cache. fp16 and bf16 differ in range,
// not in size or tensor-core rate, so the simulator treats them alike apart from the name.
// fp4 is the 4-bit float (e2m1) of MXFP4 and NVFP4; its block scales are counted by the
// checkpoint's quantization (quantization.h), not here.
enum class DType { FP32, BF16, FP16, FP8, INT8, INT4, FP4 };
inline constexpr std::size_t kDTypeCount = 7;

// Bytes per element; int4 and fp4 pack two elements per byte.
double bytes_per_element(DType dtype) noexcept;
std::string_view dtype_name(DType dtype) noexcept;

// Accepts the names above in any case, plus the aliases float32, bfloat16, float16, half,
// e4m3, e5m2, fp8_e4m3, fp8_e5m2 (all fp8), e2m1 (fp4). Throws InputError naming `where` and the
// valid names.
DType parse_dtype(std::string_view name, const std::string& where);

// The formats a KV cache may use (fp16/bf16, fp8, int8, int4); fp32 is refused.
DType parse_kv_dtype(std::string_view name, const std::string& where);

// True for formats narrower than 16 bits.
inline bool is_quantized(DType dtype) noexcept {
  return dtype == DType::FP8 || dtype == DType::INT8 || dtype == DType::INT4 || dtype == DType::FP4;
}

}  // namespace servesim
