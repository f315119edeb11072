#include "sim/memory/impl/first_fit_address_space.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "sim/core/error.h"

namespace servesim {

FirstFitAddressSpace::FirstFitAddressSpace(std::int64_t capacity_tokens)
    : capacity_tokens_(capacity_tokens), free_tokens_(capacity_tokens) {
  if (capacity_tokens <= 0) {
    throw InfeasibleError("the KV cache holds " + std::to_string(capacity_tokens) +
                          " tokens, no room for any sequence");
  }
  holes_.emplace(0, capacity_tokens);
}

std::optional<Region> FirstFitAddressSpace::allocate(std::int64_t tokens) {
  if (tokens <= 0) {
    throw InvariantError("first-fit allocator: asked for " + std::to_string(tokens) + " slots");
  }
  const auto hole = std::find_if(holes_.begin(), holes_.end(),
                                 [tokens](const auto& h) { return h.second >= tokens; });
  if (hole == holes_.end()) return std::nullopt;
  const auto [offset, length] = *hole;
  holes_.erase(hole);
  if (length > tokens) holes_.emplace(offset + tokens, length - tokens);
  free_tokens_ -= tokens;
  return Region{offset, tokens};
}

void FirstFitAddressSpace::free(const Region& region) {
  std::int64_t offset = region.offset_tokens;
  std::int64_t length = region.size_tokens;
  auto next = holes_.lower_bound(offset);
  const bool overlaps_next = next != holes_.end() && next->first < offset + length;
  const bool overlaps_prev =
      next != holes_.begin() && std::prev(next)->first + std::prev(next)->second > offset;
  if (length <= 0 || offset < 0 || offset + length > capacity_tokens_ || overlaps_next ||
      overlaps_prev) {
    throw InvariantError("first-fit allocator: freed " + std::to_string(length) + " slots at " +
                         std::to_string(offset) + ", which are not all in use");
  }
  free_tokens_ += length;
  if (next != holes_.end() && next->first == offset + length) {
    length += next->second;
    next = holes_.erase(next);
  }
  if (next != holes_.begin()) {
    const auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      length += prev->second;
      holes_.erase(prev);
    }
  }
  holes_.emplace(offset, length);
}

std::int64_t FirstFitAddressSpace::largest_free_tokens() const {
  std::int64_t largest = 0;
  for (const auto& [offset, length] : holes_)
    largest = std::max(largest, length);
  return largest;
}

std::int64_t FirstFitAddressSpace::free_tokens_in_holes_below(std::int64_t tokens) const {
  std::int64_t stranded = 0;
  for (const auto& [offset, length] : holes_) {
    if (length < tokens) stranded += length;
  }
  return stranded;
}

}  // namespace servesim
