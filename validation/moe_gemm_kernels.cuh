#pragma once

#include <cstdint>

#include "validation/half_precision.h"

namespace servesim::validation {

// The grouped GEMM of a mixture-of-experts layer as fused-MoE kernels run it: one launch over
// the tiles of the touched experts only (expert_routing.h's sorted_pairs and tile_experts),
// each tile tile_rows routed rows of one expert by 64 output columns, on 16 x 16 x 16
// tensor-core fragments (WMMA) with fp32 accumulation. A tile gathers its rows' activations
// (row pair / a_row_divisor of A) and the expert's weight slab into shared memory, 64 of k at
// a time, prefetching the next slab into registers while it multiplies the current one; padding
// rows (pair -1) compute zeros and are not stored. Output row `pair` of C [routed rows x n].
// Simple and correct, not vLLM's Triton kernel: no split-k, no asynchronous copies.
struct GroupedGemmArgs {
  ElementType dtype = ElementType::BF16;
  const void* a = nullptr;                     // [rows x k] 16-bit
  const void* w = nullptr;                     // [experts x n x k] 16-bit
  void* c = nullptr;                           // [routed rows x n] 16-bit
  const std::int32_t* sorted_pairs = nullptr;  // tiles x tile_rows entries
  const std::int32_t* tile_experts = nullptr;  // tiles entries
  std::int64_t tiles = 0;
  std::int64_t tile_rows = 16;     // 16, 32 or 64
  std::int64_t n = 0, k = 0;       // k a multiple of 8
  std::int64_t a_row_divisor = 1;  // top_k for mlp_up (a token's hidden state), 1 for mlp_down
};
void launch_grouped_gemm(const GroupedGemmArgs& args);

}  // namespace servesim::validation
