#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servesim {

// The physical blocks of a paged KV cache: which are free and how many are used. Free
// blocks form a stack whose top is taken first (a fresh pool hands out 0, 1, 2, ...); freed
// blocks go back on top, a table's last block first. Knows nothing about sequences.
//
// Decode rounds may count blocks as taken before they leave the free list (count_taken),
// so that a run of rounds can hand them out table by table in one pass (see
// DecodeCohort::hand_out); drop_counted then takes them off the list.
class BlockPool {
 public:
  // Throws InfeasibleError for fewer than one block or more than 2^31 (block ids are 32-bit).
  explicit BlockPool(std::int64_t total_blocks);

  std::int64_t total() const { return total_; }
  std::int64_t free() const { return free_; }
  std::int64_t used() const { return total_ - free_; }

  // Takes `count` free blocks onto the end of `blocks`, in the order they leave the pool.
  // The caller has checked that they are free.
  void take(std::int64_t count, std::vector<std::int32_t>& blocks) {
    for (std::int64_t i = 0; i < count; ++i) {
      blocks.push_back(free_list_.back());
      free_list_.pop_back();
    }
    free_ -= count;
  }
  // Returns the blocks of a table (all of them, in logical order).
  void give_back(std::span<const std::int32_t> blocks);

  // Counts `count` blocks as taken that stay on the free list until drop_counted.
  void count_taken(std::int64_t count) {
    free_ -= count;
    counted_ += count;
  }
  // The free list from its bottom; the block taken next is the last, and a block counted
  // k-th (from 0) since the last drop_counted is at [size - 1 - k].
  std::span<const std::int32_t> free_list() const { return free_list_; }
  // Takes the counted blocks off the free list.
  void drop_counted();

  // used + free == total, and the free list holds the free blocks and the counted ones.
  bool conserved() const {
    return free_ >= 0 && static_cast<std::int64_t>(free_list_.size()) - counted_ == free_;
  }

 private:
  std::int64_t total_;
  std::int64_t free_;
  std::int64_t counted_ = 0;             // taken by decode rounds, still on the free list
  std::vector<std::int32_t> free_list_;  // free block ids; taken from the back
};

}  // namespace servesim
