#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

namespace servesim {

// The host tier of a prefix cache: the identities of KV blocks evicted from the GPU whose
// copies host memory keeps, at most `capacity_blocks` of them, least recently used dropped
// first (vLLM's CPU offloading, LMCache, SGLang's HiCache keep such a tier). A hit brings a
// block back over the host link instead of recomputing it. Knows nothing about GPU blocks.
class HostBlockCache {
 public:
  explicit HostBlockCache(std::int64_t capacity_blocks) : capacity_blocks_(capacity_blocks) {}

  bool contains(std::uint64_t hash) const { return index_.contains(hash); }
  // A block evicted from the GPU: kept as the most recently used (dropping the least).
  void insert(std::uint64_t hash);
  // A hit: the block is the most recently used.
  void touch(std::uint64_t hash);

  std::int64_t capacity_blocks() const { return capacity_blocks_; }
  std::int64_t size() const { return static_cast<std::int64_t>(index_.size()); }

 private:
  std::int64_t capacity_blocks_;
  std::list<std::uint64_t> order_;  // most recently used first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> index_;
};

}  // namespace servesim
