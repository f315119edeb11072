#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "sim/memory/address_space.h"

namespace servesim {

// First fit over a free list of holes sorted by address: a request takes the start of the
// lowest hole it fits in, exactly its size (no rounding), and a freed region coalesces with
// the holes touching it. Operations cost O(holes), and holes never outnumber the regions
// in use plus one, so the cost grows with running sequences, not with slots.
class FirstFitAddressSpace final : public IAddressSpace {
 public:
  explicit FirstFitAddressSpace(std::int64_t capacity_tokens);

  std::optional<Region> allocate(std::int64_t tokens) override;
  void free(const Region& region) override;

  std::int64_t largest_free_tokens() const override;
  std::int64_t largest_free_tokens_when_empty() const override { return capacity_tokens_; }

  std::int64_t free_tokens() const override { return free_tokens_; }
  std::int64_t free_holes() const override { return static_cast<std::int64_t>(holes_.size()); }
  std::int64_t free_tokens_in_holes_below(std::int64_t tokens) const override;

  std::int64_t capacity_tokens() const override { return capacity_tokens_; }

 private:
  std::int64_t capacity_tokens_;
  std::map<std::int64_t, std::int64_t> holes_;  // offset -> length, never adjacent
  std::int64_t free_tokens_;
};

}  // namespace servesim
