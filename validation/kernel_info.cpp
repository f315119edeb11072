#include "validation/kernel_info.h"

#include <stdexcept>

namespace servesim::validation {

std::int64_t gemv_rows_per_pass(std::int64_t m) {
  if (m < 1) throw std::invalid_argument("gemv_rows_per_pass: m must be at least 1");
  std::int64_t rows = 1;
  while (rows < m && rows < kMaxGemvRowsPerPass)
    rows *= 2;
  return rows;
}

KernelInfo quant_gemv_kernel(WeightFormat format, std::int64_t m) {
  return KernelInfo{format == WeightFormat::Int4 ? "int4_gemv" : "fp8_gemv", "gemv", "cuda",
                    gemv_rows_per_pass(m), kGemvColumnsPerBlock};
}

KernelInfo grouped_moe_kernel(std::int64_t tile_rows) {
  return KernelInfo{"grouped_wmma", "grouped", "tensor", tile_rows, kGroupedTileColumns};
}

KernelInfo cublaslt_fp8_kernel() {
  return KernelInfo{"cublasLt", "", "tensor", 0, 0};
}

}  // namespace servesim::validation
