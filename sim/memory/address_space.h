#pragma once

#include <cstdint>
#include <optional>

namespace servesim {

// One contiguous run of token slots in a KV address space.
struct Region {
  std::int64_t offset_tokens = 0;
  std::int64_t size_tokens = 0;
};

// Places contiguous regions in a replica's KV address space of `capacity_tokens()` slots
// and keeps the free space as holes. A placement may round a request up (the buddy system
// hands out powers of two); the region it returns says how much was really taken. Knows
// nothing about sequences: the caller hands back exactly the regions it was given.
// Throws InvariantError when asked to free slots that are free already or outside the space.
class IAddressSpace {
 public:
  virtual ~IAddressSpace() = default;

  // A region of at least `tokens` slots (tokens > 0), or nothing if no hole can host one.
  virtual std::optional<Region> allocate(std::int64_t tokens) = 0;
  virtual void free(const Region& region) = 0;

  // The largest request `allocate` could serve now, and in the empty space.
  virtual std::int64_t largest_free_tokens() const = 0;
  virtual std::int64_t largest_free_tokens_when_empty() const = 0;

  // Free slots in total, the number of holes they form, and the free slots in holes too
  // small to host a request of `tokens` slots (the external fragmentation it would see).
  virtual std::int64_t free_tokens() const = 0;
  virtual std::int64_t free_holes() const = 0;
  virtual std::int64_t free_tokens_in_holes_below(std::int64_t tokens) const = 0;

  virtual std::int64_t capacity_tokens() const = 0;
};

}  // namespace servesim
