#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "sim/memory/address_space.h"

namespace servesim {

// The binary buddy system, as the Orca baselines of the vLLM paper placed their
// reservations: blocks of 2^k slots, a request takes the smallest free block that holds it
// (the rounding is internal fragmentation), a larger block is split in halves to make one,
// and a freed block merges with its buddy whenever the buddy is free too.
//
// A capacity that is not a power of two is covered by its binary digits as arenas, largest
// first (15,728 = 8192 + 4096 + 2048 + 1024 + 256 + 64 + 32 + 16); blocks never merge across
// arenas. Each arena starts at a multiple of its own size, so a block's buddy is its offset
// with bit k flipped. Among blocks of the smallest fitting size the lowest address wins,
// which keeps runs deterministic.
class BuddyAddressSpace final : public IAddressSpace {
 public:
  explicit BuddyAddressSpace(std::int64_t capacity_tokens);

  std::optional<Region> allocate(std::int64_t tokens) override;
  void free(const Region& region) override;

  std::int64_t largest_free_tokens() const override;
  std::int64_t largest_free_tokens_when_empty() const override;

  std::int64_t free_tokens() const override { return free_tokens_; }
  std::int64_t free_holes() const override { return free_holes_; }
  std::int64_t free_tokens_in_holes_below(std::int64_t tokens) const override;

  std::int64_t capacity_tokens() const override { return capacity_tokens_; }
  std::int64_t arena_count() const { return static_cast<std::int64_t>(arenas_.size()); }

 private:
  // Orders 0..62 cover every block an int64_t capacity can hold.
  static constexpr int kOrders = 63;
  struct Arena {
    std::int64_t offset_tokens;
    int order;
  };
  int arena_order_at(std::int64_t offset_tokens) const;

  std::int64_t capacity_tokens_;
  std::vector<Arena> arenas_;                                // by offset, so also by falling size
  std::array<std::set<std::int64_t>, kOrders> free_blocks_;  // per order, offsets by address
  std::unordered_map<std::int64_t, int> allocated_;          // offset -> order
  std::int64_t free_tokens_ = 0;
  std::int64_t free_holes_ = 0;
};

}  // namespace servesim
