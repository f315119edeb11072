#pragma once

#include <cstdint>

#include "validation/half_precision.h"

namespace servesim::validation {

// CUDA-core kernels for GEMV-sized GEMMs with narrow weights, in the serving layout
// C[m x n] = A[m x k] . W[n x k]^T (formats in quantized_formats.h). One warp per output
// column streams that weight row once per pass of up to 16 token rows (gemv_rows_per_pass),
// dequantising in registers and accumulating in fp32. Simple and correct, not Marlin or a
// tensor-core FP8 GEMM: at a few tokens both are bound by the weight bytes, which these read
// once, coalesced, 16 bytes per lane. All pointers are device pointers; default stream.

struct Int4GemvArgs {
  ElementType dtype = ElementType::BF16;  // activations, scales and output
  const void* a = nullptr;                // [m x k] 16-bit
  const std::uint32_t* packed = nullptr;  // [n x k / 8] words of codes
  const void* scales = nullptr;           // [n x k / group_size] 16-bit
  void* c = nullptr;                      // [m x n] 16-bit
  std::int64_t m = 0, n = 0, k = 0;       // k a multiple of 32 and of group_size
  std::int64_t group_size = 128;          // a multiple of 8
};
void launch_int4_gemv(const Int4GemvArgs& args);

struct Fp8GemvArgs {
  ElementType dtype = ElementType::BF16;  // output
  const std::uint8_t* a = nullptr;        // [m x k] e4m3
  const std::uint8_t* w = nullptr;        // [n x k] e4m3
  float a_scale = 1.0f;                   // per-tensor scales, applied to the fp32 sum
  float w_scale = 1.0f;
  void* c = nullptr;                 // [m x n] 16-bit
  std::int64_t m = 0, n = 0, k = 0;  // k a multiple of 16
};
void launch_fp8_gemv(const Fp8GemvArgs& args);

}  // namespace servesim::validation
