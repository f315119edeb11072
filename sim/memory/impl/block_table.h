#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/memory/impl/block_pool.h"

namespace servesim {

// One sequence's blocks in a paged KV cache. Out of the decode cohort (DecodeCohort) the
// tokens held and the free slots in the last block (blocks x block size - tokens) are
// current; in it, both are as of the round the table joined, and the cohort advances them
// lazily.
struct BlockTable {
  std::int64_t sequence = 0;
  std::int64_t tokens = 0;
  std::int64_t spare = 0;
  std::int64_t joined = -1;          // the cohort round it joined at; -1: not in the cohort
  std::size_t group = 0;             // in the cohort: its group (see DecodeCohort)
  std::int64_t held = 0;             // blocks held
  std::vector<std::int32_t> blocks;  // their ids, in logical order (none from an anonymous pool)
  // Prefix caching: the identities of the blocks its content covers (empty: none, and then
  // none of its blocks is ever named), and how many of its leading blocks are named or
  // were offered a name (committed: computed, or hit).
  std::span<const std::uint64_t> hashes;
  std::int64_t committed_blocks = 0;
};

// Takes `count` free blocks from `pool` onto the end of `t` (the caller has checked that they
// are free).
inline void take_blocks(BlockPool& pool, BlockTable& t, std::int64_t count) {
  pool.take(count, t.blocks);
  t.held += count;
}

}  // namespace servesim
