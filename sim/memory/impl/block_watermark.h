#pragma once

#include <cmath>
#include <cstdint>

#include "sim/memory/impl/block_pool.h"

namespace servesim {

// The admission rule both paged allocators keep, as vLLM's block manager: a new sequence is
// admitted only while a watermark of free blocks (a fraction of the pool, 1% in vLLM) remains
// for running sequences to grow into, but the watermark never shuts out a sequence that fits
// an otherwise empty cache.
class BlockWatermark {
 public:
  BlockWatermark(double fraction, std::int64_t total_blocks)
      : blocks_(
            static_cast<std::int64_t>(std::floor(fraction * static_cast<double>(total_blocks)))) {}

  // Whether a sequence needing `needed` fresh blocks may be admitted now.
  bool admits(const BlockPool& pool, std::int64_t needed) const {
    if (pool.used() == 0) return needed <= pool.free();
    return pool.free() - needed >= blocks_;
  }
  // The free blocks an admission leaves to running sequences.
  std::int64_t blocks() const { return blocks_; }

 private:
  std::int64_t blocks_;
};

// The invariant errors of a paged allocator asked for what it has no room for.
[[noreturn]] void throw_admitted_without_room(const char* allocator, std::int64_t sequence);
[[noreturn]] void throw_no_block_to_grow(const char* allocator, std::int64_t sequence,
                                         std::int64_t tokens);

}  // namespace servesim
