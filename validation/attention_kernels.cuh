#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "validation/attention_batch.h"
#include "validation/half_precision.h"
#include "validation/shapes.h"

namespace servesim::validation {

// Where the kernels find a token's KV row (see KvLayout): block_size 0 reads
// sequence_start_rows (contiguous), otherwise the block table (paged).
struct KvAddressing {
  std::int64_t block_size = 0;
  const std::int64_t* sequence_start_rows = nullptr;  // device, one per sequence
  const std::int32_t* block_table = nullptr;          // device, sequence-major
  std::int64_t max_blocks_per_sequence = 0;
};

// One attention launch: query i (a row of q) attends to the first queries[i].keys tokens
// of its sequence; decode and prefill are the same kernel with different query lists.
// All pointers are device pointers to 16-bit elements of `dtype`, except `queries`.
struct AttentionArgs {
  ElementType dtype = ElementType::BF16;
  HeadShape heads;
  const void* q = nullptr;  // [queries x q_row_stride], head h at h x head_dim
  std::int64_t q_row_stride = 0;
  const AttentionQuery* queries = nullptr;
  std::int64_t num_queries = 0;
  const void* k = nullptr;  // [rows x num_kv_heads x head_dim]
  const void* v = nullptr;
  KvAddressing kv;
  void* out = nullptr;  // [queries x num_heads x head_dim]
};

// Largest head_dim the kernel supports.
constexpr std::int64_t kMaxAttentionHeadDim = 256;

// One thread block per (query, head): four warps split the keys, each warp keeps an online
// softmax (running max, sum and weighted values; lanes split head_dim), and the warps merge
// at the end. fp32 throughout, output rounded once. Throws HarnessFailure on a shape it does
// not support or a launch error.
void launch_attention(const AttentionArgs& args, cudaStream_t stream = nullptr);

}  // namespace servesim::validation
