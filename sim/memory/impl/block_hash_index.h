#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

// The prefix cache's index from a block's content hash to the block that holds it (at most
// one block per hash): what std::unordered_map<hash, block> does for BlockPool, in one flat
// array. Each block names at most one hash, so the entries never exceed the pool's blocks and
// the array, sized once at twice that (a power of two), never grows: no allocation per name
// and no rehash. Linear probing from a Fibonacci-hashed home; erase shifts the later entries
// of a probe run back (no tombstones). tests/memory/block_hash_index_test.cpp holds it equal
// to std::unordered_map over random scripts.
class BlockHashIndex {
 public:
  explicit BlockHashIndex(std::int64_t max_entries)
      : entries_(std::bit_ceil(static_cast<std::size_t>(2 * max_entries + 2))),
        mask_(entries_.size() - 1),
        shift_(64 - static_cast<unsigned>(std::countr_zero(entries_.size()))) {}

  // The block holding `hash`, or -1.
  std::int32_t find(std::uint64_t hash) const noexcept { return entries_[probe(hash)].block; }
  // Registers `block` under `hash` unless some block already holds it; whether it did.
  bool insert(std::uint64_t hash, std::int32_t block) noexcept {
    Entry& e = entries_[probe(hash)];
    if (e.block >= 0) return false;
    e = Entry{hash, block};
    return true;
  }
  // Forgets `hash` (nothing if absent).
  void erase(std::uint64_t hash) noexcept {
    std::size_t hole = probe(hash);
    if (entries_[hole].block < 0) return;
    for (std::size_t next = (hole + 1) & mask_; entries_[next].block >= 0;
         next = (next + 1) & mask_) {
      const std::size_t home = home_of(entries_[next].hash);
      // Move the entry into the hole unless that would put it before its home.
      if (((next - home) & mask_) >= ((next - hole) & mask_)) {
        entries_[hole] = entries_[next];
        hole = next;
      }
    }
    entries_[hole] = Entry{};
  }

 private:
  struct Entry {
    std::uint64_t hash = 0;
    std::int32_t block = -1;  // -1: empty
  };
  std::size_t home_of(std::uint64_t hash) const noexcept {
    return static_cast<std::size_t>((hash * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  // Where `hash` is, or the empty entry that ends its probe run.
  std::size_t probe(std::uint64_t hash) const noexcept {
    std::size_t at = home_of(hash);
    while (entries_[at].block >= 0 && entries_[at].hash != hash)
      at = (at + 1) & mask_;
    return at;
  }

  std::vector<Entry> entries_;
  std::size_t mask_;
  unsigned shift_;
};

}  // namespace servesim
