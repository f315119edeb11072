#include "sim/memory/impl/block_pool.h"

#include <string>

#include "sim/core/error.h"

namespace servesim {

BlockPool::BlockPool(std::int64_t total_blocks, bool prefix_caching, std::int64_t host_cache_blocks,
                     bool anonymous)
    : total_(total_blocks), free_(total_blocks), caching_(prefix_caching), anonymous_(anonymous) {
  if (caching_ && host_cache_blocks > 0) host_.emplace(host_cache_blocks);
  if (total_blocks > INT32_MAX - 1) {
    throw InfeasibleError("the KV cache holds more than 2^31 blocks; use a larger block size");
  }
  if (!anonymous_) stack_free_from(0);
}

void BlockPool::stack_free_from(std::int64_t first) {
  // Lowest ids on top, so a fresh cache hands out blocks first, first + 1, ...
  free_list_.reserve(static_cast<std::size_t>(total_ - first));
  for (std::int64_t id = total_ - 1; id >= first; --id)
    free_list_.push_back(static_cast<std::int32_t>(id));
}

void BlockPool::identify(std::int64_t held) {
  if (!anonymous_ || held != used()) anonymous_misused();
  anonymous_ = false;
  stack_free_from(held);
  if (caching_) form_queue();
}

void BlockPool::anonymous_misused() const {
  throw InvariantError("blocks_conserved",
                       "paged allocator: block ids used or given out wrongly in an anonymous pool");
}

void BlockPool::form_queue() {
  if (counted_ != 0) {
    throw InvariantError("paged allocator: a block named while decode rounds hold counted ones");
  }
  const auto total = static_cast<std::size_t>(total_);
  next_.assign(total + 1, 0);
  prev_.assign(total + 1, 0);
  ref_.assign(total, 1);  // held by one sequence: nothing is shared before a name
  hash_.assign(total, 0);
  named_.assign(total, 0);
  cached_.emplace(total_);
  // The sentinel alone, then the stack from its top.
  next_[total] = prev_[total] = static_cast<std::int32_t>(total);
  queued_ = 0;
  for (auto it = free_list_.rbegin(); it != free_list_.rend(); ++it) {
    push_back(*it);
    ref_[static_cast<std::size_t>(*it)] = 0;
  }
  free_list_.clear();
  free_list_.shrink_to_fit();
  queue_ = true;
}

void BlockPool::unlink(std::int32_t block) {
  const auto b = static_cast<std::size_t>(block);
  next_[static_cast<std::size_t>(prev_[b])] = next_[b];
  prev_[static_cast<std::size_t>(next_[b])] = prev_[b];
  --queued_;
}

void BlockPool::push_back(std::int32_t block) {
  const auto sentinel = static_cast<std::int32_t>(total_);
  const std::int32_t last = prev_[static_cast<std::size_t>(sentinel)];
  next_[static_cast<std::size_t>(last)] = block;
  prev_[static_cast<std::size_t>(block)] = last;
  next_[static_cast<std::size_t>(block)] = sentinel;
  prev_[static_cast<std::size_t>(sentinel)] = block;
  ++queued_;
}

std::int32_t BlockPool::pop_front() {
  const std::int32_t block = next_[static_cast<std::size_t>(total_)];
  const auto b = static_cast<std::size_t>(block);
  unlink(block);
  if (named_[b] != 0) {
    // Evicted: its KV is overwritten, so its hash names nothing any more on the GPU; a
    // host tier keeps its copy.
    cached_->erase(hash_[b]);
    if (host_) host_->insert(hash_[b]);
    named_[b] = 0;
    --cached_free_;
  }
  ref_[b] = 1;
  return block;
}

void BlockPool::give_back(std::span<const std::int32_t> blocks) {
  if (anonymous_) anonymous_misused();
  if (!queue_) {
    free_list_.insert(free_list_.end(), blocks.rbegin(), blocks.rend());
    free_ += static_cast<std::int64_t>(blocks.size());
    return;
  }
  // The tail first, as vLLM frees a request's blocks in reverse.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const auto b = static_cast<std::size_t>(*it);
    if (ref_[b] <= 0) {
      throw InvariantError("blocks_conserved", "paged allocator: block " + std::to_string(*it) +
                                                   " freed with no holder");
    }
    if (--ref_[b] > 0) {
      --extra_holders_;
      continue;
    }
    push_back(*it);
    ++free_;
    if (named_[b] != 0) ++cached_free_;
  }
}

void BlockPool::share(std::int32_t block) {
  const auto b = static_cast<std::size_t>(block);
  if (ref_[b] == 0) {
    unlink(block);
    --free_;
    if (named_[b] != 0) --cached_free_;
  } else {
    ++extra_holders_;
  }
  ++ref_[b];
}

bool BlockPool::name(std::int32_t block, std::uint64_t hash) {
  if (anonymous_) anonymous_misused();
  if (!queue_) form_queue();
  const auto b = static_cast<std::size_t>(block);
  if (named_[b] != 0) return false;
  if (!cached_->insert(hash, block)) return false;
  named_[b] = 1;
  hash_[b] = hash;
  return true;
}

void BlockPool::drop_counted() {
  if (queue_) {
    counted_blocks_.clear();
    return;
  }
  free_list_.resize(free_list_.size() - static_cast<std::size_t>(counted_));
  counted_ = 0;
}

}  // namespace servesim
