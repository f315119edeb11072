#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/memory/impl/block_hash_index.h"

using namespace servesim;

namespace {

// Random inserts, finds and erases against std::unordered_map, the plain index BlockPool
// used before; at most `max_entries` held, as a pool of that many blocks holds.
void check_against_map(std::uint64_t seed, std::int64_t max_entries,
                       const std::vector<std::uint64_t>& hashes) {
  BlockHashIndex index(max_entries);
  std::unordered_map<std::uint64_t, std::int32_t> plain;
  std::mt19937_64 rng(seed);
  std::int32_t next_block = 0;
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t hash = hashes[rng() % hashes.size()];
    switch (rng() % 3) {
      case 0:
        if (static_cast<std::int64_t>(plain.size()) < max_entries) {
          const std::int32_t block = next_block++;
          REQUIRE(index.insert(hash, block) == plain.try_emplace(hash, block).second);
        }
        break;
      case 1:
        index.erase(hash);
        plain.erase(hash);
        break;
      default:
        break;
    }
    const auto it = plain.find(hash);
    REQUIRE(index.find(hash) == (it == plain.end() ? -1 : it->second));
  }
  // Every hash at the end, held or not.
  for (const std::uint64_t hash : hashes) {
    const auto it = plain.find(hash);
    REQUIRE(index.find(hash) == (it == plain.end() ? -1 : it->second));
  }
}

}  // namespace

TEST_CASE("the block hash index finds, inserts and erases as std::unordered_map does",
          "[memory][prefix]") {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> spread(300);
  for (std::uint64_t& h : spread)
    h = rng();
  // Hashes that share their home entries (equal top bits after the multiply are likely
  // among small consecutive numbers in a small table): long probe runs, shifted on erase.
  std::vector<std::uint64_t> crowded;
  for (std::uint64_t h = 0; h < 64; ++h)
    crowded.push_back(h << 58);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    check_against_map(seed, 200, spread);
    check_against_map(seed, 40, crowded);
    check_against_map(seed, 1, crowded);
  }
}

TEST_CASE("the block hash index keeps at most one block per hash", "[memory][prefix]") {
  BlockHashIndex index(4);
  CHECK(index.find(42) == -1);
  CHECK(index.insert(42, 3));
  CHECK_FALSE(index.insert(42, 5));  // a second block with the same content stays anonymous
  CHECK(index.find(42) == 3);
  index.erase(42);
  CHECK(index.find(42) == -1);
  CHECK(index.insert(42, 5));
  CHECK(index.find(42) == 5);
  index.erase(7);  // absent: nothing
  CHECK(index.find(42) == 5);
}
