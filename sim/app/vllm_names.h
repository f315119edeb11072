#pragma once

#include <string>

namespace servesim {

// vLLM's value names for the settings whose names differ from servesim's (vllm serve's
// --kv-cache-dtype and --quantization), translated to servesim's; values servesim has no
// equivalent for are an InputError naming the flag and the values it takes.

// --kv-cache-dtype: auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2 -> a kv_dtype. Both fp8
// formats are one byte per element, which is all the cost model and the KV arithmetic see.
std::string kv_dtype_for_vllm(const std::string& value);

// --quantization: fp8 and fbgemm_fp8 -> fp8; awq, awq_marlin, gptq, gptq_marlin -> int4 (the
// 4-bit checkpoints these kernels serve; an 8-bit GPTQ checkpoint is --weight-dtype int8).
std::string weight_dtype_for_vllm_quantization(const std::string& value);

}  // namespace servesim
