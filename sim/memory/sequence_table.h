#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"

namespace servesim {

// The InvariantError of an allocator (`owner`) asked for a sequence it does not hold, or to
// admit one it holds: "OWNER: sequence N WHAT".
[[noreturn]] inline void throw_sequence_error(std::string_view owner, std::int64_t sequence,
                                              std::string_view what) {
  throw InvariantError(std::string(owner) + ": sequence " + std::to_string(sequence) + " " +
                       std::string(what));
}

// What an allocator keeps per sequence, keyed by sequence id. The allocator looks a
// sequence up for every token it grows, so this is a flat open-addressing index (linear
// probing, deletion by backward shift: no tombstones) over a pool of values: a few hundred
// running sequences fit in a few cache lines, and a lookup is a multiply, a shift and
// usually one probe. A released value stays in the pool for the next sequence, so the
// vectors inside it keep their capacity and steady-state admission does not allocate.
// Pointers to values stay valid until the next emplace.
template <class Value>
class SequenceTable {
  // Declared before Finder, whose members name it (clang requires it; gcc looks ahead).
  struct Entry;

 public:
  SequenceTable() : index_(kInitialIndexSize) {}

  Value* find(std::int64_t sequence) noexcept {
    const std::int32_t slot = index_[position_of(sequence)].slot;
    return slot < 0 ? nullptr : &pool_[static_cast<std::size_t>(slot)];
  }
  const Value* find(std::int64_t sequence) const noexcept {
    const std::int32_t slot = index_[position_of(sequence)].slot;
    return slot < 0 ? nullptr : &pool_[static_cast<std::size_t>(slot)];
  }
  bool contains(std::int64_t sequence) const noexcept { return find(sequence) != nullptr; }
  // The value of a sequence that must be present: else an InvariantError naming `owner`.
  Value& at(std::int64_t sequence, std::string_view owner) {
    Value* v = find(sequence);
    if (v == nullptr) throw_sequence_error(owner, sequence, "is not held");
    return *v;
  }
  const Value& at(std::int64_t sequence, std::string_view owner) const {
    const Value* v = find(sequence);
    if (v == nullptr) throw_sequence_error(owner, sequence, "is not held");
    return *v;
  }

  // find() for a loop over many sequences: the table's geometry is held in locals, so stores
  // to the values found cannot force it to be reloaded. Valid until the next emplace or erase.
  class Finder {
   public:
    Value* operator()(std::int64_t sequence) const noexcept {
      const std::int32_t slot = index_[probe(index_, mask_, shift_, sequence)].slot;
      return slot < 0 ? nullptr : &pool_[slot];
    }
    // Hints for a loop that will find `sequence` soon: its index entry, and once that is at
    // hand (a later call), its value.
    void prefetch_entry(std::int64_t sequence) const noexcept {
      __builtin_prefetch(&index_[home_of(sequence, shift_)]);
    }
    void prefetch_value(std::int64_t sequence) const noexcept {
      const typename SequenceTable::Entry& e = index_[home_of(sequence, shift_)];
      if (e.slot >= 0) __builtin_prefetch(&pool_[e.slot], 1);
    }

   private:
    friend class SequenceTable;
    explicit Finder(SequenceTable& table)
        : index_(table.index_.data()),
          mask_(table.index_.size() - 1),
          shift_(table.shift_),
          pool_(table.pool_.data()) {}
    const typename SequenceTable::Entry* index_;
    std::size_t mask_;
    unsigned shift_;
    Value* pool_;
  };
  Finder finder() noexcept { return Finder(*this); }

  // The value for a new sequence, as the pool's previous holder of that slot left it (the
  // caller resets it); nullptr when the sequence is already present.
  Value* emplace(std::int64_t sequence) {
    if (index_[position_of(sequence)].slot >= 0) return nullptr;
    if (2 * (size_ + 1) > index_.size()) rehash(2 * index_.size());
    std::int32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::int32_t>(pool_.size());
      pool_.emplace_back();
    }
    index_[position_of(sequence)] = Entry{sequence, slot};
    ++size_;
    return &pool_[static_cast<std::size_t>(slot)];
  }
  // emplace() of a sequence that must be new: else an InvariantError naming `owner`.
  Value& emplace_new(std::int64_t sequence, std::string_view owner) {
    Value* v = emplace(sequence);
    if (v == nullptr) throw_sequence_error(owner, sequence, "admitted twice");
    return *v;
  }

  // Whether the next emplace leaves every value where it is (it reuses a released one's place,
  // or the pool has room).
  bool emplace_keeps_values() const noexcept {
    return !free_slots_.empty() || pool_.size() < pool_.capacity();
  }

  // Forgets the sequence; false when it was not present.
  bool erase(std::int64_t sequence) {
    std::size_t hole = position_of(sequence);
    if (index_[hole].slot < 0) return false;
    free_slots_.push_back(index_[hole].slot);
    --size_;
    // Backward shift: pull later entries of the probe run into the hole unless that would
    // move one before its home position.
    const std::size_t mask = index_.size() - 1;
    for (std::size_t next = (hole + 1) & mask; index_[next].slot >= 0; next = (next + 1) & mask) {
      const std::size_t home = home_of(index_[next].sequence);
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        index_[hole] = index_[next];
        hole = next;
      }
    }
    index_[hole] = Entry{};
    return true;
  }

  std::size_t size() const noexcept { return size_; }
  // Calls f(sequence, value) for every sequence held, in the index's order (deterministic for
  // the same calls).
  template <class F>
  void for_each(F f) {
    for (const Entry& e : index_) {
      if (e.slot >= 0) f(e.sequence, pool_[static_cast<std::size_t>(e.slot)]);
    }
  }

 private:
  struct Entry {
    std::int64_t sequence = 0;
    std::int32_t slot = -1;  // -1: empty
  };
  static constexpr std::size_t kInitialIndexSize = 64;

  static std::size_t home_of(std::int64_t sequence, unsigned shift) noexcept {
    // Fibonacci hashing: the top bits of a multiply spread consecutive ids evenly.
    const std::uint64_t mixed = static_cast<std::uint64_t>(sequence) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(mixed >> shift);
  }
  std::size_t home_of(std::int64_t sequence) const noexcept { return home_of(sequence, shift_); }
  // Where the sequence is, or the empty entry that ends its probe run.
  static std::size_t probe(const Entry* index, std::size_t mask, unsigned shift,
                           std::int64_t sequence) noexcept {
    std::size_t at = home_of(sequence, shift);
    while (index[at].slot >= 0 && index[at].sequence != sequence)
      at = (at + 1) & mask;
    return at;
  }
  std::size_t position_of(std::int64_t sequence) const noexcept {
    return probe(index_.data(), index_.size() - 1, shift_, sequence);
  }
  void rehash(std::size_t entries) {
    std::vector<Entry> old(entries);
    old.swap(index_);
    shift_ = 64 - std::countr_zero(entries);
    for (const Entry& e : old) {
      if (e.slot >= 0) index_[position_of(e.sequence)] = e;
    }
  }

  std::vector<Entry> index_;  // a power of two entries, at most half full
  unsigned shift_ = 64 - std::countr_zero(kInitialIndexSize);
  std::size_t size_ = 0;
  std::vector<Value> pool_;
  std::vector<std::int32_t> free_slots_;
};

}  // namespace servesim
