#include "sim/workload/prefix_reuse.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace servesim {

UnboundedPrefixReuse::UnboundedPrefixReuse(std::int64_t block_tokens)
    : block_tokens_(block_tokens) {
  if (block_tokens < 1) {
    throw InvariantError("prefix reuse: block size " + std::to_string(block_tokens));
  }
}

std::int64_t UnboundedPrefixReuse::add(std::span<const ContentSegment> content,
                                       std::int64_t prompt_tokens) {
  if (prompt_tokens < 1) {
    throw InvariantError("prefix reuse: a prompt of " + std::to_string(prompt_tokens) + " tokens");
  }
  const std::vector<std::uint64_t> hashes = block_hashes(content, block_tokens_);
  const auto cap_blocks = static_cast<std::size_t>((prompt_tokens - 1) / block_tokens_);
  const std::size_t limit = std::min(cap_blocks, hashes.size());
  std::size_t hit_blocks = 0;
  // Chained identities: block i held means some request held blocks 0..i as well.
  while (hit_blocks < limit && held_.contains(hashes[hit_blocks]))
    ++hit_blocks;
  held_.insert(hashes.begin(), hashes.end());
  const std::int64_t hit = static_cast<std::int64_t>(hit_blocks) * block_tokens_;
  prompt_tokens_ += prompt_tokens;
  hit_tokens_ += hit;
  return hit;
}

double UnboundedPrefixReuse::hit_ratio() const {
  if (prompt_tokens_ == 0) return 0.0;
  return static_cast<double>(hit_tokens_) / static_cast<double>(prompt_tokens_);
}

}  // namespace servesim
