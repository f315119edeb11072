#pragma once

#include <cstdint>
#include <vector>

#include "sim/model/kv_spec.h"

namespace servesim {

// One of vLLM's KV cache groups: `layers_per_group` layers of one kind (some of them padding
// when the kind's layers do not divide evenly) that share one block table per sequence.
struct KvPoolGroup {
  KvGroupKind kind = KvGroupKind::FullAttention;
  std::int64_t window_tokens = 0;  // SlidingWindow: W; ChunkedLocal: the chunk
  // Tokens one block holds; 0 for RecurrentState, whose sequences hold one block each.
  std::int64_t block_tokens = 0;
  std::int64_t layers = 0;  // real layers in the group (the rest of layers_per_group pads)
};

// How one GPU's KV memory is cut, as vLLM V1's hybrid KV-cache manager cuts it
// (kv_cache_utils.py get_kv_cache_groups, get_kv_cache_config_from_groups):
//   - layers are sorted by kind; a kind of n layers is split into ceil(n / g) groups of g
//     layers, g being the fewest layers of any kind (or the most, when the most are fewer than
//     1.5 x the fewest, to avoid padding);
//   - every layer's page (one block of one layer) has one size: the attention kinds' block
//     sizes grow until their pages are equal, and with recurrent layers the attention block
//     grows (in steps of the kernel alignment, 16 or the block size if larger) until a page
//     holds a layer's recurrent state, which is padded to it;
//   - one pool of blocks serves every group: g tensors of num_blocks pages, layer i of every
//     group in tensor i, so a block is g pages and
//         num_blocks = floor(KV bytes / page bytes / g);
//   - vLLM logs `GPU KV cache size: num_blocks / groups x block size` tokens.
// A model of one full-attention or MLA group is one group of all its layers.
struct KvPoolLayout {
  std::vector<KvPoolGroup> groups;
  std::int64_t layers_per_group = 0;  // g
  double page_bytes = 0;              // one block of one layer
  std::int64_t block_tokens = 0;      // the smallest attention block size (vLLM's min_block_size)

  // Whether the pool needs per-group block tables: more than one group, or one whose memory
  // does not grow with every token (windows, chunks, recurrent states).
  bool per_group() const noexcept;
  // One block of the pool: a page in each of g layers.
  double block_bytes() const noexcept { return page_bytes * static_cast<double>(layers_per_group); }
  // Blocks that `kv_bytes` of one GPU holds.
  std::int64_t blocks_in(double kv_bytes) const noexcept;
  // vLLM's `GPU KV cache size` for a pool of `blocks`.
  std::int64_t reported_tokens(std::int64_t blocks) const noexcept;
  // The pool whose reported size is `tokens` (the inverse of reported_tokens, whole blocks).
  std::int64_t blocks_for_reported_tokens(std::int64_t tokens) const noexcept;
  // Blocks one sequence of `tokens` tokens holds at most, as vLLM's max_memory_usage_bytes
  // counts them: whole blocks of the full and MLA groups; W - 1 + `step_tokens` tokens plus a
  // block of a window, chunk + `step_tokens` of a chunked group (at most `tokens`); one block
  // of a recurrent group.
  std::int64_t max_blocks_per_sequence(std::int64_t tokens, std::int64_t step_tokens) const;
};

// The layout of `groups_per_gpu` (kv_groups_per_gpu) at `block_tokens` tokens per block.
// Throws InputError for a block size below 1.
KvPoolLayout kv_pool_layout(const std::vector<KvGroup>& groups_per_gpu, std::int64_t block_tokens);

}  // namespace servesim
