#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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
  std::vector<std::int32_t> blocks;  // physical block ids, in logical order
  // Prefix caching: the identities of the blocks its content covers (empty: none, and then
  // none of its blocks is ever named), and how many of its leading blocks are named or
  // were offered a name (committed: computed, or hit).
  std::span<const std::uint64_t> hashes;
  std::int64_t committed_blocks = 0;
};

}  // namespace servesim
