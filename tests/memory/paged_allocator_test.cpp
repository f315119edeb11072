#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sim/core/error.h"
#include "sim/memory/impl/paged_allocator.h"

using namespace servesim;

TEST_CASE("paged allocation takes blocks as tokens arrive and returns them all", "[memory]") {
  PagedAllocator a(160, 16, 0.0);  // 10 blocks
  REQUIRE(a.total_blocks() == 10);
  a.admit(1, 17, 40);  // 2 blocks, 15 slots of tail
  REQUIRE(a.free_blocks() == 8);
  KvUsage u = a.usage(0);
  REQUIRE(u.token_states == 17);
  REQUIRE(u.internal_fragmentation == 15);
  REQUIRE(u.free == 128);
  REQUIRE(u.token_states + u.internal_fragmentation + u.free == u.capacity_tokens);
  a.grow(1, 15);  // fills block 2 exactly
  REQUIRE(a.free_blocks() == 8);
  a.grow(1, 1);  // spills into block 3
  REQUIRE(a.free_blocks() == 7);
  a.admit(2, 100, 100);  // 7 blocks: everything
  REQUIRE(a.free_blocks() == 0);
  REQUIRE_FALSE(a.can_grow(2, 13));
  REQUIRE(a.can_grow(2, 12));  // the tail of its last block
  REQUIRE_FALSE(a.can_admit(1, 1));
  REQUIRE_THROWS_AS(a.grow(1, 16), InvariantError);
  a.release(1);
  a.release(2);
  REQUIRE(a.free_blocks() == 10);
  REQUIRE(a.usage(0).token_states == 0);
  REQUIRE(a.sequences() == 0);
}

TEST_CASE("the watermark holds back admissions but not growth", "[memory]") {
  PagedAllocator a(1600, 16, 0.1);  // 100 blocks, watermark 10
  a.admit(1, 16, 0);
  REQUIRE(a.can_admit(89 * 16, 0));
  REQUIRE_FALSE(a.can_admit(90 * 16, 0));
  a.admit(2, 89 * 16, 0);
  REQUIRE(a.can_grow(2, 10 * 16));
  PagedAllocator empty(1600, 16, 0.5);
  // A sequence that fits the empty cache is never shut out by the watermark.
  REQUIRE(empty.can_admit(100 * 16, 0));
  REQUIRE(empty.fits_when_empty(1600));
  REQUIRE_FALSE(empty.fits_when_empty(1601));
}

TEST_CASE("paged allocator refuses bad sizes and unknown sequences", "[memory]") {
  REQUIRE_THROWS_AS(PagedAllocator(160, 0), InputError);
  REQUIRE_THROWS_AS(PagedAllocator(15, 16), InfeasibleError);
  PagedAllocator a(160, 16);
  REQUIRE_THROWS_AS(a.release(7), InvariantError);
  a.admit(7, 1, 1);
  REQUIRE_THROWS_AS(a.admit(7, 1, 1), InvariantError);
}

TEST_CASE("block tables count their blocks, which return to the pool", "[memory]") {
  PagedAllocator a(8 * 16, 16, 0.0);
  a.admit(1, 20, 0);  // 2 blocks
  a.admit(2, 40, 0);  // 3 blocks
  a.grow(1, 20);      // a third block for 1
  CHECK(a.held_blocks(1) == 3);
  CHECK(a.held_blocks(2) == 3);
  CHECK(a.free_blocks() == 2);
  // Nothing is ever named without prefix caching: no block needs an id.
  CHECK_FALSE(a.block_ids_known());
  CHECK(a.block_table(1).empty());
  a.release(1);
  CHECK(a.free_blocks() == 5);
  a.admit(3, 48, 0);
  CHECK(a.held_blocks(3) == 3);
  CHECK(a.free_blocks() == 2);
  REQUIRE_THROWS_AS(a.grow(3, 3 * 16 + 1), InvariantError);
}

TEST_CASE("the first name gives every held block a distinct id, the free ones queued after them",
          "[memory][prefix]") {
  PagedAllocator a(8 * 16, 16, 0.0, /*prefix_caching=*/true);
  a.admit(1, 20, 0);  // 2 blocks, no content
  const std::vector<std::uint64_t> hashes = {11, 12, 13};
  a.admit_prefix(PrefixKey{2, hashes, 48}, 48, 48);  // 3 blocks of content
  CHECK_FALSE(a.block_ids_known());
  a.commit_computed(2, 48);  // names its blocks
  REQUIRE(a.block_ids_known());
  std::vector<std::int32_t> held(a.block_table(1));
  REQUIRE(held.size() == 2);
  REQUIRE(a.block_table(2).size() == 3);
  held.insert(held.end(), a.block_table(2).begin(), a.block_table(2).end());
  std::vector<std::int32_t> sorted(held);
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // none held twice
  for (const auto id : held)
    CHECK((id >= 0 && id < 8));
  // The three free blocks leave the queue before the two that 1 gives back.
  const std::vector<std::int32_t> freed = a.block_table(1);
  a.release(1);
  a.admit(3, 48, 0);
  for (const auto id : a.block_table(3)) {
    CHECK(std::find(held.begin(), held.end(), id) == held.end());
    CHECK((id >= 0 && id < 8));
  }
  a.grow(3, 32);  // then the ones 1 held, its tail first
  const auto& grown = a.block_table(3);
  REQUIRE(grown.size() == 5);
  CHECK(grown[3] == freed[1]);
  CHECK(grown[4] == freed[0]);
  // A hit finds 2's named blocks.
  CHECK(a.cached_prefix_tokens(PrefixKey{4, hashes, 49}) == 48);
}
