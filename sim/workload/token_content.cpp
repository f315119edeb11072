#include "sim/workload/token_content.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace servesim {

std::uint64_t mix_ids(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<std::uint64_t> block_hashes(std::span<const ContentSegment> content,
                                        std::int64_t block_size) {
  if (block_size < 1) {
    throw InvariantError("block_hashes: block size " + std::to_string(block_size));
  }
  std::vector<std::uint64_t> hashes;
  // A block's identity folds in, for each run of one segment inside it, the segment's id and
  // the offsets the run starts and ends at, then chains onto the block before.
  std::uint64_t chain = 0x5e17e5117ULL;
  std::uint64_t block = chain;
  std::int64_t filled = 0;  // tokens of the current block covered so far
  for (const ContentSegment& segment : content) {
    if (segment.tokens < 1) {
      throw InvariantError("block_hashes: a content segment of " + std::to_string(segment.tokens) +
                           " tokens");
    }
    std::int64_t offset = 0;
    while (offset < segment.tokens) {
      const std::int64_t run = std::min(block_size - filled, segment.tokens - offset);
      block = mix_ids(mix_ids(block, segment.id), (static_cast<std::uint64_t>(offset) << 32) ^
                                                      static_cast<std::uint64_t>(offset + run));
      offset += run;
      filled += run;
      if (filled == block_size) {
        chain = block;
        hashes.push_back(chain);
        filled = 0;
      }
    }
  }
  return hashes;
}

}  // namespace servesim
