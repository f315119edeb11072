#pragma once

#include <cstdint>
#include <string>

#include "validation/quantized_formats.h"

namespace servesim::validation {

// The kernel a `quant-gemm`, `moe-gemm` or `gemm --dtype fp8` record was timed with, in the
// vocabulary of the `kernel` column of `servesim roofline` (kind gemv or grouped, tile_m rows per
// tile), so that a measured time can be set beside the kernel the simulator prices for the same
// shape. The harness's own kernels dispatch on the same functions, so a record cannot name another
// kernel.
struct KernelInfo {
  std::string name;         // "int4_gemv", "fp8_gemv", "grouped_wmma" (the harness's), "cublasLt"
  std::string kind;         // "gemv" or "grouped"; empty: not known
  std::string cores;        // "cuda" (CUDA cores, fp32 FMA) or "tensor" (MMA)
  std::int64_t tile_m = 0;  // token rows one pass over the weights computes; 0: not known
  std::int64_t tile_n = 0;  // output columns one thread block computes; 0: not known
};

// The CUDA-core GEMV kernels keep one fp32 sum per token row in registers: a pass over the
// weights serves the smallest power of two at least m, at most 16, rows; larger m takes
// ceil(m / 16) passes. Throws std::invalid_argument unless m >= 1.
std::int64_t gemv_rows_per_pass(std::int64_t m);
inline constexpr std::int64_t kMaxGemvRowsPerPass = 16;
inline constexpr std::int64_t kGemvColumnsPerBlock = 8;  // one warp per output column

// The grouped MoE kernel: tiles of tile_rows routed rows of one expert by 64 output columns, on
// 16 x 16 x 16 tensor-core fragments (four warps of 16 columns each).
inline constexpr std::int64_t kGroupedTileColumns = 64;

KernelInfo quant_gemv_kernel(WeightFormat format, std::int64_t m);
KernelInfo grouped_moe_kernel(std::int64_t tile_rows);

// `gemm --dtype fp8`: the tensor-core kernel cuBLASLt's heuristic chose. cuBLASLt reports its
// choice only as enum ids (algorithm, tile, stages), which the harness prints on standard error;
// the record names the library and the cores, not a kind or tile.
KernelInfo cublaslt_fp8_kernel();

}  // namespace servesim::validation
