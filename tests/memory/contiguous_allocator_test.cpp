#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>

#include "sim/core/error.h"
#include "sim/memory/impl/buddy_address_space.h"
#include "sim/memory/impl/contiguous_allocator.h"
#include "sim/memory/impl/first_fit_address_space.h"
#include "sim/memory/impl/fixed_reservation.h"
#include "sim/memory/impl/max_reservation.h"
#include "sim/memory/impl/oracle_reservation.h"
#include "sim/memory/impl/pow2_reservation.h"

using namespace servesim;

namespace {

template <typename Policy, typename Space, typename... PolicyArgs>
ContiguousAllocator make(std::int64_t capacity_tokens, PolicyArgs... args) {
  return ContiguousAllocator(std::make_unique<Policy>(args...),
                             std::make_unique<Space>(capacity_tokens));
}

std::int64_t sum(const KvUsage& u) {
  return u.token_states + u.reserved + u.internal_fragmentation + u.external_fragmentation + u.free;
}

}  // namespace

TEST_CASE("reservation policies size regions as the Orca baselines did", "[memory]") {
  REQUIRE(MaxReservation(2048).reservation_tokens(100, 50) == 2048);
  REQUIRE(FixedReservation(300).reservation_tokens(100, 50) == 300);
  REQUIRE(OracleReservation().reservation_tokens(100, 50) == 150);
  const Pow2Reservation pow2;
  REQUIRE(pow2.reservation_tokens(100, 50) == 164);
  REQUIRE(pow2.reservation_tokens(100, 64) == 164);
  REQUIRE(pow2.reservation_tokens(100, 65) == 228);
  REQUIRE(pow2.reservation_tokens(100, 1) == 101);
  REQUIRE(pow2.reservation_tokens(100, 0) == 100);
  // The bounds over every split of a final length, against brute force.
  for (std::int64_t final_tokens = 1; final_tokens <= 300; ++final_tokens) {
    std::int64_t smallest = final_tokens * 4;
    std::int64_t largest = 0;
    for (std::int64_t prompt = 0; prompt <= final_tokens; ++prompt) {
      const std::int64_t r = pow2.reservation_tokens(prompt, final_tokens - prompt);
      smallest = std::min(smallest, r);
      largest = std::max(largest, r);
    }
    REQUIRE(pow2.smallest_reservation_tokens(final_tokens) == smallest);
    REQUIRE(pow2.largest_reservation_tokens(final_tokens) == largest);
  }
  REQUIRE_THROWS_AS(MaxReservation(0), InputError);
  REQUIRE_THROWS_AS(FixedReservation(-1), InputError);
}

TEST_CASE("the buddy system splits blocks and merges buddies back", "[memory]") {
  BuddyAddressSpace space(15728);
  REQUIRE(space.arena_count() == 8);  // 8192 + 4096 + 2048 + 1024 + 256 + 64 + 32 + 16
  REQUIRE(space.largest_free_tokens_when_empty() == 8192);
  REQUIRE(space.free_holes() == 8);

  // Each request takes the smallest free block that holds it, splitting only when none fits.
  const auto a = space.allocate(100);  // 128: one half of the 256 arena
  REQUIRE(a->offset_tokens == 15360);
  REQUIRE(a->size_tokens == 128);
  REQUIRE(space.free_holes() == 8);
  const auto b = space.allocate(128);  // a's buddy
  REQUIRE(b->offset_tokens == 15488);
  const auto c = space.allocate(3000);  // the 4096 arena
  REQUIRE(c->offset_tokens == 8192);
  REQUIRE(c->size_tokens == 4096);
  const auto d = space.allocate(2000);
  const auto e = space.allocate(600);
  REQUIRE(space.free_holes() == 4);    // 8192, 64, 32, 16
  const auto f = space.allocate(100);  // split out of 8192, halves 128 .. 4096 left free
  REQUIRE(f->offset_tokens == 0);
  REQUIRE(space.free_holes() == 4 - 1 + 6);
  REQUIRE(space.free_tokens() == 8192 - 128 + 64 + 32 + 16);
  REQUIRE_FALSE(space.allocate(4097));
  REQUIRE(space.largest_free_tokens() == 4096);

  space.free(*a);  // its buddy is in use: no merge
  REQUIRE(space.free_holes() == 10);
  space.free(*b);  // the pair merges back into the 256 arena
  REQUIRE(space.free_holes() == 10);
  REQUIRE(space.free_tokens_in_holes_below(256) == 128 + 64 + 32 + 16);
  space.free(*f);  // merges all the way up to 8192
  REQUIRE(space.free_holes() == 5);
  REQUIRE(space.largest_free_tokens() == 8192);
  for (const auto& region : {c, d, e})
    space.free(*region);
  REQUIRE(space.free_tokens() == 15728);
  REQUIRE(space.free_holes() == space.arena_count());

  REQUIRE_THROWS_AS(space.free(*c), InvariantError);  // freed twice
  REQUIRE_THROWS_AS(space.free(Region{8192, 4096}), InvariantError);
  REQUIRE_THROWS_AS(BuddyAddressSpace(0), InfeasibleError);
}

TEST_CASE("buddies never merge across arenas", "[memory]") {
  BuddyAddressSpace space(8 + 4);  // arenas [0, 8) and [8, 12)
  const auto small = space.allocate(4);
  REQUIRE(small->offset_tokens == 8);  // the smallest fitting block, not a split of the 8
  const auto large = space.allocate(8);
  REQUIRE(large->offset_tokens == 0);
  space.free(*small);
  space.free(*large);
  REQUIRE(space.free_holes() == 2);
  REQUIRE(space.largest_free_tokens() == 8);
}

TEST_CASE("first fit takes the lowest hole and coalesces neighbours", "[memory]") {
  FirstFitAddressSpace space(100);
  const auto a = space.allocate(30);
  const auto b = space.allocate(30);
  const auto c = space.allocate(30);
  REQUIRE(b->offset_tokens == 30);
  REQUIRE(space.free_holes() == 1);  // [90, 100)
  space.free(*a);
  const auto d = space.allocate(10);  // the lowest hole, though [90, 100) fits exactly
  REQUIRE(d->offset_tokens == 0);
  REQUIRE(d->size_tokens == 10);
  REQUIRE(space.free_tokens() == 30);
  REQUIRE_FALSE(space.allocate(25));  // 30 slots free, but in holes of 20 and 10
  REQUIRE(space.largest_free_tokens() == 20);
  REQUIRE(space.free_tokens_in_holes_below(15) == 10);
  space.free(*d);  // joins the hole after it: [0, 30)
  REQUIRE(space.free_holes() == 2);
  space.free(*c);  // joins the hole after it: [60, 100)
  REQUIRE(space.free_holes() == 2);
  REQUIRE(space.largest_free_tokens() == 40);
  space.free(*b);  // joins both sides
  REQUIRE(space.free_holes() == 1);
  REQUIRE(space.largest_free_tokens() == 100);
  REQUIRE_THROWS_AS(space.free(Region{10, 5}), InvariantError);   // already free
  REQUIRE_THROWS_AS(space.free(Region{90, 20}), InvariantError);  // past the end
  REQUIRE_THROWS_AS(FirstFitAddressSpace(0), InfeasibleError);
}

TEST_CASE("a sequence grows within its region and never beyond", "[memory]") {
  auto oracle = make<OracleReservation, FirstFitAddressSpace>(1000);
  oracle.admit(1, 10, 50);
  REQUIRE(oracle.region(1).size_tokens == 50);
  KvUsage u = oracle.usage(0);
  REQUIRE(u.token_states == 10);
  REQUIRE(u.reserved == 40);
  REQUIRE(u.internal_fragmentation == 0);
  REQUIRE(u.free == 950);
  REQUIRE(oracle.can_grow(1, 40));
  REQUIRE_FALSE(oracle.can_grow(1, 41));
  REQUIRE_THROWS_AS(oracle.grow(1, 41), InvariantError);
  oracle.grow(1, 40);
  REQUIRE(oracle.usage(0).reserved == 0);

  // The buddy system rounds 50 up to 64: 14 slots the sequence will never fill.
  auto buddy = make<OracleReservation, BuddyAddressSpace>(1000);
  buddy.admit(1, 10, 50);
  REQUIRE(buddy.region(1).size_tokens == 64);
  u = buddy.usage(0);
  REQUIRE(u.reserved == 40);
  REQUIRE(u.internal_fragmentation == 14);
  REQUIRE(sum(u) == 1000);
  REQUIRE(buddy.can_grow(1, 54));  // the rounding is usable, it is just never needed
  REQUIRE_FALSE(buddy.can_grow(1, 55));
  buddy.release(1);
  REQUIRE(buddy.usage(0).free == 1000);
}

TEST_CASE("pow2 re-admits a preempted sequence by its remaining output", "[memory]") {
  auto a = make<Pow2Reservation, FirstFitAddressSpace>(1000);
  a.admit(1, 100, 150);  // 100 + 64
  REQUIRE(a.region(1).size_tokens == 164);
  a.grow(1, 30);
  a.release(1);          // preempted holding 130 tokens, 20 still to come
  a.admit(1, 130, 150);  // 130 + 32
  REQUIRE(a.region(1).size_tokens == 162);
  REQUIRE(a.usage(0).reserved == 20);
  REQUIRE(a.usage(0).internal_fragmentation == 12);
  a.release(1);
  a.admit(2, 10, 20);  // 10 + 16
  a.grow(2, 1);
  a.release(2);
  a.admit(2, 11, 20);  // 11 + 16: 9 more round up to 16, a larger region than before
  REQUIRE(a.region(2).size_tokens == 27);
}

TEST_CASE("the vLLM paper's Max baseline strands 8.85% of OPT-13B's KV cache", "[memory]") {
  // OPT-13B: 2 (K and V) x 40 layers x 5120 x 2 B = 819,200 B per token; 12 GiB of KV.
  const std::int64_t bytes_per_token = 2 * 40 * 5120 * 2;
  const std::int64_t capacity = (std::int64_t{12} << 30) / bytes_per_token;
  REQUIRE(capacity == 15728);
  for (const bool buddy : {true, false}) {
    auto a = buddy ? make<MaxReservation, BuddyAddressSpace>(capacity, std::int64_t{2048})
                   : make<MaxReservation, FirstFitAddressSpace>(capacity, std::int64_t{2048});
    std::int64_t admitted = 0;
    while (a.can_admit(161, 500))
      a.admit(admitted++, 161, 500);
    REQUIRE(admitted == 7);
    const KvUsage u = a.usage(2048);
    REQUIRE(u.external_fragmentation == 1392);
    REQUIRE(u.free == 0);
    REQUIRE(u.token_states == 7 * 161);
    REQUIRE(u.reserved == 7 * (500 - 161));
    REQUIRE(u.internal_fragmentation == 7 * (2048 - 500));
    REQUIRE(sum(u) == capacity);
    REQUIRE(static_cast<double>(u.external_fragmentation) / static_cast<double>(capacity) ==
            Approx(0.0885).margin(0.00005));
    REQUIRE(a.usage(0).external_fragmentation == 0);  // nobody waiting, nothing stranded
    REQUIRE(a.usage(0).free == 1392);
  }
}

TEST_CASE("sequences no reservation can hold are refused up front", "[memory]") {
  auto max = make<MaxReservation, FirstFitAddressSpace>(15728, std::int64_t{2048});
  REQUIRE(max.fits_when_empty(2048));
  REQUIRE_FALSE(max.fits_when_empty(2049));
  REQUIRE_FALSE(max.can_admit(100, 2049));  // room enough, but it could never finish
  REQUIRE_FALSE(max.fits_when_empty(0));
  auto fixed = make<FixedReservation, BuddyAddressSpace>(15728, std::int64_t{300});
  REQUIRE(fixed.fits_when_empty(300));
  REQUIRE_FALSE(fixed.fits_when_empty(301));
  auto too_long = make<MaxReservation, BuddyAddressSpace>(1000, std::int64_t{2048});
  REQUIRE_FALSE(too_long.fits_when_empty(10));  // the reservation exceeds the cache

  // The buddy system's largest block is its largest arena, not the capacity.
  REQUIRE(make<OracleReservation, BuddyAddressSpace>(15728).fits_when_empty(8192));
  REQUIRE_FALSE(make<OracleReservation, BuddyAddressSpace>(15728).fits_when_empty(8193));
  REQUIRE(make<OracleReservation, FirstFitAddressSpace>(15728).fits_when_empty(15728));
  REQUIRE_FALSE(make<OracleReservation, FirstFitAddressSpace>(15728).fits_when_empty(15729));
  // Pow2 must fit its worst re-admission: 600 can need 599 + 512 slots, 500 only 499 + 256.
  REQUIRE_FALSE(make<Pow2Reservation, FirstFitAddressSpace>(1000).fits_when_empty(600));
  REQUIRE(make<Pow2Reservation, FirstFitAddressSpace>(1000).fits_when_empty(500));
}

TEST_CASE("contiguous allocator refuses impossible requests", "[memory]") {
  auto a = make<OracleReservation, BuddyAddressSpace>(64);
  REQUIRE_THROWS_AS(a.release(3), InvariantError);
  REQUIRE_THROWS_AS(a.grow(3, 1), InvariantError);
  REQUIRE_THROWS_AS(a.can_grow(3, 1), InvariantError);
  REQUIRE_THROWS_AS(a.admit(1, 20, 10), InvariantError);  // more tokens than its final length
  a.admit(1, 10, 40);
  REQUIRE_THROWS_AS(a.admit(1, 10, 10), InvariantError);  // admitted twice
  REQUIRE_FALSE(a.can_admit(10, 40));
  REQUIRE_THROWS_AS(a.admit(2, 10, 40), InvariantError);  // no room
  REQUIRE_THROWS_AS(a.grow(1, -1), InvariantError);
  REQUIRE_THROWS_AS(ContiguousAllocator(nullptr, std::make_unique<BuddyAddressSpace>(8)),
                    InvariantError);
}
