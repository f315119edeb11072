#include "sim/memory/impl/host_block_cache.h"

namespace servesim {

void HostBlockCache::insert(std::uint64_t hash) {
  if (capacity_blocks_ <= 0) return;
  if (const auto it = index_.find(hash); it != index_.end()) {
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  if (static_cast<std::int64_t>(index_.size()) >= capacity_blocks_) {
    index_.erase(order_.back());
    order_.pop_back();
  }
  order_.push_front(hash);
  index_.emplace(hash, order_.begin());
}

void HostBlockCache::touch(std::uint64_t hash) {
  if (const auto it = index_.find(hash); it != index_.end()) {
    order_.splice(order_.begin(), order_, it->second);
  }
}

}  // namespace servesim
