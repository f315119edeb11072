#include "sim/memory/impl/buddy_address_space.h"

#include <algorithm>
#include <bit>
#include <string>

#include "sim/core/error.h"

namespace servesim {

namespace {

std::int64_t block_tokens(int order) {
  return std::int64_t{1} << order;
}

// The order of the smallest block holding `tokens` (tokens > 0).
int order_for(std::int64_t tokens) {
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(tokens - 1)));
}

}  // namespace

BuddyAddressSpace::BuddyAddressSpace(std::int64_t capacity_tokens)
    : capacity_tokens_(capacity_tokens) {
  if (capacity_tokens <= 0) {
    throw InfeasibleError("the KV cache holds " + std::to_string(capacity_tokens) +
                          " tokens, no room for any sequence");
  }
  std::int64_t offset = 0;
  for (int order = kOrders - 1; order >= 0; --order) {
    if ((capacity_tokens & block_tokens(order)) == 0) continue;
    arenas_.push_back({offset, order});
    free_blocks_[static_cast<std::size_t>(order)].insert(offset);
    offset += block_tokens(order);
  }
  free_tokens_ = capacity_tokens;
  free_holes_ = static_cast<std::int64_t>(arenas_.size());
}

int BuddyAddressSpace::arena_order_at(std::int64_t offset_tokens) const {
  const auto after = std::upper_bound(
      arenas_.begin(), arenas_.end(), offset_tokens,
      [](std::int64_t offset, const Arena& a) { return offset < a.offset_tokens; });
  return std::prev(after)->order;
}

std::optional<Region> BuddyAddressSpace::allocate(std::int64_t tokens) {
  if (tokens <= 0) {
    throw InvariantError("buddy allocator: asked for " + std::to_string(tokens) + " slots");
  }
  const int order = order_for(tokens);
  int from = order;
  while (from < kOrders && free_blocks_[static_cast<std::size_t>(from)].empty())
    ++from;
  if (from >= kOrders) return std::nullopt;

  auto& source = free_blocks_[static_cast<std::size_t>(from)];
  const std::int64_t offset = *source.begin();
  source.erase(source.begin());
  --free_holes_;
  // Keep the lower half at every split; the upper halves become free blocks.
  while (from > order) {
    --from;
    free_blocks_[static_cast<std::size_t>(from)].insert(offset + block_tokens(from));
    ++free_holes_;
  }
  allocated_.emplace(offset, order);
  free_tokens_ -= block_tokens(order);
  return Region{offset, block_tokens(order)};
}

void BuddyAddressSpace::free(const Region& region) {
  const auto it = allocated_.find(region.offset_tokens);
  if (it == allocated_.end() || block_tokens(it->second) != region.size_tokens) {
    throw InvariantError("buddy allocator: freed " + std::to_string(region.size_tokens) +
                         " slots at " + std::to_string(region.offset_tokens) +
                         ", which is not an allocated block");
  }
  int order = it->second;
  std::int64_t offset = region.offset_tokens;
  allocated_.erase(it);
  free_tokens_ += block_tokens(order);

  const int arena_order = arena_order_at(offset);
  while (order < arena_order) {
    auto& peers = free_blocks_[static_cast<std::size_t>(order)];
    const auto buddy = peers.find(offset ^ block_tokens(order));
    if (buddy == peers.end()) break;
    offset = std::min(offset, *buddy);
    peers.erase(buddy);
    --free_holes_;
    ++order;
  }
  free_blocks_[static_cast<std::size_t>(order)].insert(offset);
  ++free_holes_;
}

std::int64_t BuddyAddressSpace::largest_free_tokens() const {
  for (int order = kOrders - 1; order >= 0; --order) {
    if (!free_blocks_[static_cast<std::size_t>(order)].empty()) return block_tokens(order);
  }
  return 0;
}

std::int64_t BuddyAddressSpace::largest_free_tokens_when_empty() const {
  return block_tokens(arenas_.front().order);
}

// Free blocks are powers of two, so a block too small for `tokens` is also too small for
// the power of two it rounds up to.
std::int64_t BuddyAddressSpace::free_tokens_in_holes_below(std::int64_t tokens) const {
  std::int64_t stranded = 0;
  for (int order = 0; order < kOrders && block_tokens(order) < tokens; ++order) {
    stranded += static_cast<std::int64_t>(free_blocks_[static_cast<std::size_t>(order)].size()) *
                block_tokens(order);
  }
  return stranded;
}

}  // namespace servesim
