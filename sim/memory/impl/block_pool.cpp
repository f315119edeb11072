#include "sim/memory/impl/block_pool.h"

#include <string>

#include "sim/core/error.h"

namespace servesim {

BlockPool::BlockPool(std::int64_t total_blocks) : total_(total_blocks), free_(total_blocks) {
  if (total_blocks > INT32_MAX) {
    throw InfeasibleError("the KV cache holds more than 2^31 blocks; use a larger block size");
  }
  // Lowest ids on top, so a fresh cache hands out blocks 0, 1, 2, ...
  free_list_.reserve(static_cast<std::size_t>(total_blocks));
  for (std::int64_t id = total_blocks - 1; id >= 0; --id)
    free_list_.push_back(static_cast<std::int32_t>(id));
}

void BlockPool::give_back(std::span<const std::int32_t> blocks) {
  free_list_.insert(free_list_.end(), blocks.rbegin(), blocks.rend());
  free_ += static_cast<std::int64_t>(blocks.size());
}

void BlockPool::drop_counted() {
  free_list_.resize(free_list_.size() - static_cast<std::size_t>(counted_));
  counted_ = 0;
}

}  // namespace servesim
