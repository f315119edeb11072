#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/memory/decode_round_allocator.h"
#include "sim/memory/impl/paged_allocator.h"

using namespace servesim;

namespace {

bool same_usage(const KvUsage& a, const KvUsage& b) {
  return a.capacity_tokens == b.capacity_tokens && a.token_states == b.token_states &&
         a.reserved == b.reserved && a.internal_fragmentation == b.internal_fragmentation &&
         a.external_fragmentation == b.external_fragmentation && a.free == b.free &&
         a.cached == b.cached;
}

// Two paged allocators holding the same sequences at assorted lengths, each grown by one
// decode round (the one that forms the fast path's cohort): `fast` through grow_each,
// `plain` one grow at a time.
struct Pair {
  PagedAllocator fast;
  PagedAllocator plain;
  std::vector<std::int64_t> sequences;

  Pair(std::int64_t block_size, bool prefix_caching, std::uint64_t seed)
      : fast(8000, block_size, 0.01, prefix_caching),
        plain(8000, block_size, 0.01, prefix_caching) {
    std::mt19937_64 random(seed);
    for (std::int64_t id = 0; id < 60; ++id) {
      const auto tokens = static_cast<std::int64_t>(random() % 200) + 1;
      if (!fast.can_admit(tokens + 40, tokens + 1000)) break;
      fast.admit(id, tokens, tokens + 1000);
      plain.admit(id, tokens, tokens + 1000);
      sequences.push_back(id);
    }
    REQUIRE(fast.decode_rounds()->grow_each(sequences, 1) == sequences.size());
    for (const std::int64_t sequence : sequences)
      plain.grow(sequence, 1);
  }
};

std::int64_t rounds_in(const std::vector<DecodeRoundStretch>& stretches) {
  std::int64_t rounds = 0;
  for (const DecodeRoundStretch& s : stretches)
    rounds += s.rounds;
  return rounds;
}

}  // namespace

TEST_CASE("decode stretches through preemption leave the paged allocator as single grows would",
          "[memory]") {
  for (const std::int64_t block_size : {1, 16, 128}) {
    for (const bool prefix_caching : {false, true}) {
      SECTION("block " + std::to_string(block_size) + (prefix_caching ? ", caching" : "")) {
        Pair pair(block_size, prefix_caching, 5 + static_cast<std::uint64_t>(block_size));
        REQUIRE(pair.sequences.size() >= 10);
        std::vector<DecodeRoundStretch> stretches;
        std::vector<DecodeRoundStretch> offered;
        pair.fast.decode_stretches(
            pair.sequences, 600,
            [&offered](const DecodeRoundStretch& s) {
              offered.push_back(s);
              return true;
            },
            stretches);
        // Memory runs out well within 600 rounds: the rounds go on by preempting, every
        // stretch keeps fewer sequences, and each was offered to go_on.
        REQUIRE(stretches.size() >= 3);
        CHECK(rounds_in(stretches) == 600);
        CHECK(offered.size() == stretches.size() - 1);
        CHECK(stretches.front().sequences == pair.sequences.size());
        for (std::size_t i = 1; i < stretches.size(); ++i) {
          CHECK(stretches[i].sequences < stretches[i - 1].sequences);
          CHECK(stretches[i].sequences == offered[i - 1].sequences);
          CHECK(stretches[i].admissible_tokens == offered[i - 1].admissible_tokens);
        }

        // The plain path, stretch by stretch: where it preempts, how many it keeps, and what
        // an admission could take after each stretch's first round.
        std::vector<KvUsage> plain_usages;
        std::size_t batch = pair.sequences.size();
        for (std::size_t i = 0; i < stretches.size(); ++i) {
          const DecodeRoundStretch& s = stretches[i];
          const std::span<const std::int64_t> members = std::span(pair.sequences).first(batch);
          if (s.rounds == 0) continue;
          // One round, then the rest of the stretch.
          std::vector<KvUsage> usages(1);
          const DecodeRoundStretch first{1, s.sequences, 0};
          grow_decode_stretches_in_turn(pair.plain, members, std::span(&first, 1), 0, usages);
          plain_usages.push_back(usages.front());
          if (i > 0) {
            const std::int64_t admissible = s.admissible_tokens;
            CHECK(pair.plain.can_admit(std::max<std::int64_t>(admissible, 1), 1) ==
                  (admissible >= 1));
            CHECK_FALSE(pair.plain.can_admit(admissible + 1, admissible + 1));
          }
          const DecodeRoundStretch rest{s.rounds - 1, s.sequences, 0};
          std::vector<KvUsage> later(static_cast<std::size_t>(rest.rounds));
          grow_decode_stretches_in_turn(pair.plain, std::span(pair.sequences).first(s.sequences),
                                        std::span(&rest, 1), 0, later);
          plain_usages.insert(plain_usages.end(), later.begin(), later.end());
          batch = s.sequences;
        }

        std::vector<KvUsage> fast_usages(static_cast<std::size_t>(rounds_in(stretches)));
        pair.fast.decode_rounds()->grow_decode_stretches(pair.sequences, stretches, 0, fast_usages);
        REQUIRE(fast_usages.size() == plain_usages.size());
        for (std::size_t r = 0; r < fast_usages.size(); ++r)
          CHECK(same_usage(fast_usages[r], plain_usages[r]));
        CHECK(pair.fast.sequences() == pair.plain.sequences());
        CHECK(pair.fast.sequences() == static_cast<std::int64_t>(stretches.back().sequences));
        for (std::size_t i = 0; i < stretches.back().sequences; ++i) {
          CHECK(pair.fast.held_blocks(pair.sequences[i]) ==
                pair.plain.held_blocks(pair.sequences[i]));
        }
        // The fast path's state goes on as the plain one's: another round, grown in bulk.
        const std::span<const std::int64_t> kept =
            std::span(pair.sequences).first(stretches.back().sequences);
        const std::size_t grown = pair.fast.decode_rounds()->grow_each(kept, 1);
        std::size_t plain_grown = 0;
        while (plain_grown < kept.size() && pair.plain.try_grow(kept[plain_grown], 1))
          ++plain_grown;
        CHECK(grown == plain_grown);
        CHECK(same_usage(pair.fast.usage(0), pair.plain.usage(0)));
      }
    }
  }
}

TEST_CASE("decode stretches end with the round go_on declines", "[memory]") {
  Pair pair(16, false, 3);
  std::vector<DecodeRoundStretch> all;
  pair.fast.decode_stretches(
      pair.sequences, 600, [](const DecodeRoundStretch&) { return true; }, all);
  REQUIRE(all.size() >= 4);
  std::vector<DecodeRoundStretch> three;
  int asked = 0;
  pair.fast.decode_stretches(
      pair.sequences, 600, [&asked](const DecodeRoundStretch&) { return ++asked < 2; }, three);
  REQUIRE(three.size() == 3);
  CHECK(asked == 2);
  CHECK(three[0].rounds == all[0].rounds);
  CHECK(three[1].sequences == all[1].sequences);
  CHECK(three[1].rounds == all[1].rounds);  // it ends where the next round is short of blocks
  CHECK(three[2].sequences == all[2].sequences);
  CHECK(three[2].rounds == 1);  // the declined round preempts, and nothing after it
  // Declining the first: the rounds decode_rounds_available grants, then the one round
  // short of blocks.
  std::vector<DecodeRoundStretch> first;
  pair.fast.decode_stretches(
      pair.sequences, 600, [](const DecodeRoundStretch&) { return false; }, first);
  REQUIRE(first.size() == 2);
  CHECK(first[0].rounds == pair.fast.decode_rounds_available(pair.sequences, 600));
  CHECK(first[0].rounds < 600);
  CHECK(first[1].rounds == 1);
  CHECK(first[1].sequences == all[1].sequences);
}

TEST_CASE("decode stretches never plan past a named block", "[memory]") {
  // Once prefix caching names a block, freed blocks have ids whose order matters: one stretch.
  PagedAllocator fast(8000, 16, 0.01, true);
  const std::vector<std::uint64_t> hashes{11, 12};
  fast.admit_prefix(PrefixKey{0, hashes, 32}, 32, 500);
  fast.commit_computed(0, 32);
  std::vector<std::int64_t> sequences{0};
  for (std::int64_t id = 1; id < 40; ++id) {
    fast.admit(id, 150, 1000);
    sequences.push_back(id);
  }
  REQUIRE(fast.block_ids_known());
  REQUIRE(fast.decode_rounds()->grow_each(sequences, 1) == sequences.size());
  std::vector<DecodeRoundStretch> stretches;
  fast.decode_stretches(
      sequences, 600, [](const DecodeRoundStretch&) { return true; }, stretches);
  REQUIRE(stretches.size() == 1);
  CHECK(stretches[0].rounds == fast.decode_rounds_available(sequences, 600));
}

TEST_CASE("decode stretches take in the sequences admitted after the last decode batch",
          "[memory]") {
  // A plan decodes the cohort and ends the prompts of new sequences after it: the rounds
  // after it decode them all, the new ones last, and go on through preemption as the
  // cohort's would, the newest first to leave.
  for (const std::int64_t block_size : {1, 16}) {
    Pair pair(block_size, false, 11 + static_cast<std::uint64_t>(block_size));
    std::vector<std::int64_t> sequences = pair.sequences;
    for (std::int64_t id = 100; id < 103; ++id) {
      const std::int64_t tokens = 31 + 17 * (id - 100);
      REQUIRE(pair.fast.can_admit(tokens, tokens + 1000));
      pair.fast.admit(id, tokens, tokens + 1000);
      pair.plain.admit(id, tokens, tokens + 1000);
      sequences.push_back(id);
    }
    std::vector<DecodeRoundStretch> stretches;
    pair.fast.decode_stretches(
        sequences, 600, [](const DecodeRoundStretch&) { return true; }, stretches);
    REQUIRE(stretches.size() >= 3);  // through preemption: the cohort took the new tables in
    CHECK(stretches.front().sequences == sequences.size());
    CHECK(rounds_in(stretches) == 600);
    std::vector<KvUsage> fast_usages(600);
    std::vector<KvUsage> plain_usages(600);
    pair.fast.decode_rounds()->grow_decode_stretches(sequences, stretches, 0, fast_usages);
    grow_decode_stretches_in_turn(pair.plain, sequences, stretches, 0, plain_usages);
    for (std::size_t r = 0; r < fast_usages.size(); ++r)
      CHECK(same_usage(fast_usages[r], plain_usages[r]));
    CHECK(pair.fast.sequences() == pair.plain.sequences());
    for (std::size_t i = 0; i < stretches.back().sequences; ++i)
      CHECK(pair.fast.held_blocks(sequences[i]) == pair.plain.held_blocks(sequences[i]));
  }
  // Sequences the cohort does not begin are not taken in: one stretch, as before.
  Pair pair(16, false, 7);
  std::vector<std::int64_t> reordered(pair.sequences.rbegin(), pair.sequences.rend());
  std::vector<DecodeRoundStretch> stretches;
  pair.fast.decode_stretches(
      reordered, 600, [](const DecodeRoundStretch&) { return true; }, stretches);
  REQUIRE(stretches.size() == 1);
  CHECK(stretches[0].rounds == pair.fast.decode_rounds_available(reordered, 600));
}
