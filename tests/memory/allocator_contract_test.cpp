#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sim/memory/decode_round_allocator.h"
#include "sim/memory/impl/buddy_address_space.h"
#include "sim/memory/impl/contiguous_allocator.h"
#include "sim/memory/impl/first_fit_address_space.h"
#include "sim/memory/impl/fixed_reservation.h"
#include "sim/memory/impl/max_reservation.h"
#include "sim/memory/impl/oracle_reservation.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/memory/impl/pow2_reservation.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/workload/token_content.h"
#include "tests/support/allocator_script.h"

using namespace servesim;
using test::Script;

namespace {

constexpr std::int64_t kCapacityTokens = 6000;
constexpr std::int64_t kMaxLenTokens = 512;

struct Configuration {
  std::string name;
  std::function<std::unique_ptr<IKvCacheAllocator>()> make;
};

std::vector<Configuration> every_configuration() {
  std::vector<Configuration> all;
  for (const std::int64_t block_size : {1, 16, 128}) {
    all.push_back({"paged/" + std::to_string(block_size), [block_size] {
                     return std::make_unique<PagedAllocator>(kCapacityTokens, block_size);
                   }});
    // Prefix caching with no content: nothing is named, the free blocks stay a stack.
    all.push_back({"paged+prefix/" + std::to_string(block_size), [block_size] {
                     return std::make_unique<PagedAllocator>(kCapacityTokens, block_size, 0.01,
                                                             true);
                   }});
    // Once a block was named, the free blocks are vLLM's free queue: one sequence with
    // content came and went, leaving its block cached.
    all.push_back(
        {"paged+prefix+queue/" + std::to_string(block_size), [block_size] {
           auto a = std::make_unique<PagedAllocator>(kCapacityTokens, block_size, 0.01, true);
           static const std::vector<std::uint64_t> hashes = block_hashes(TokenContent{{1, 128}}, 1);
           const std::int64_t sequence = std::int64_t{1} << 40;
           a->admit_prefix(PrefixKey{sequence, hashes, block_size + 1}, block_size, block_size + 1);
           a->commit_computed(sequence, block_size);
           a->release(sequence);
           REQUIRE(a->usage(0).cached == block_size);
           return a;
         }});
  }
  using PolicyFactory = std::function<std::unique_ptr<IReservationPolicy>()>;
  using SpaceFactory = std::function<std::unique_ptr<IAddressSpace>()>;
  const std::vector<std::pair<std::string, PolicyFactory>> policies = {
      {"max", [] { return std::make_unique<MaxReservation>(kMaxLenTokens); }},
      {"pow2", [] { return std::make_unique<Pow2Reservation>(); }},
      {"oracle", [] { return std::make_unique<OracleReservation>(); }},
      {"fixed", [] { return std::make_unique<FixedReservation>(300); }},
  };
  const std::vector<std::pair<std::string, SpaceFactory>> spaces = {
      {"buddy", [] { return std::make_unique<BuddyAddressSpace>(kCapacityTokens); }},
      {"first_fit", [] { return std::make_unique<FirstFitAddressSpace>(kCapacityTokens); }},
  };
  // Init-captures, as clang before 16 cannot capture structured bindings.
  for (const auto& [policy_name, policy] : policies) {
    for (const auto& [space_name, space] : spaces) {
      all.push_back({"contiguous/" + policy_name + "/" + space_name,
                     [make_policy = policy, make_space = space] {
                       return std::make_unique<ContiguousAllocator>(make_policy(), make_space());
                     }});
    }
  }
  return all;
}

// What the script believes each sequence holds; the allocator must agree.
struct Sequence {
  std::int64_t tokens = 0;
  std::int64_t final_tokens = 0;
};

void check_books(const IKvCacheAllocator& a, const std::map<std::int64_t, Sequence>& held,
                 std::int64_t next_final_tokens) {
  std::int64_t tokens = 0;
  for (const auto& entry : held)
    tokens += entry.second.tokens;
  const KvUsage u = a.usage(next_final_tokens);
  REQUIRE(u.capacity_tokens == a.capacity_tokens());
  REQUIRE(u.token_states + u.reserved + u.internal_fragmentation + u.external_fragmentation +
              u.free + u.cached ==
          u.capacity_tokens);
  REQUIRE(u.cached >= 0);
  REQUIRE(u.token_states >= 0);
  REQUIRE(u.reserved >= 0);
  REQUIRE(u.internal_fragmentation >= 0);
  REQUIRE(u.external_fragmentation >= 0);
  REQUIRE(u.free >= 0);
  REQUIRE(u.used() <= u.capacity_tokens);
  REQUIRE(u.token_states == tokens);
  REQUIRE(a.sequences() == static_cast<std::int64_t>(held.size()));
}

}  // namespace

TEST_CASE("every allocator keeps its books through a random admit, grow, release script",
          "[memory]") {
  for (const Configuration& configuration : every_configuration()) {
    SECTION(configuration.name) {
      const auto a = configuration.make();
      REQUIRE(a->capacity_tokens() <= kCapacityTokens);
      Script script(20230923);
      std::map<std::int64_t, Sequence> held;
      std::map<std::int64_t, Sequence> preempted;
      std::int64_t next_id = 0;
      std::int64_t admissions = 0;
      for (int step = 0; step < 3000; ++step) {
        const std::int64_t roll = script.below(100);
        if (roll < 30) {  // a new request, or a preempted one coming back
          Sequence s;
          std::int64_t id = next_id;
          if (!preempted.empty() && script.below(2) == 0) {
            id = preempted.begin()->first;
            s = preempted.begin()->second;
          } else {
            s.final_tokens = script.between(2, 600);
            s.tokens = script.between(1, s.final_tokens - 1);
            if (!a->fits_when_empty(s.final_tokens)) continue;
          }
          if (!a->can_admit(s.tokens, s.final_tokens)) continue;
          a->admit(id, s.tokens, s.final_tokens);
          held[id] = s;
          preempted.erase(id);
          if (id == next_id) ++next_id;
          ++admissions;
        } else if (roll < 90 && !held.empty()) {  // a decode step or a prefill chunk
          auto it = std::next(held.begin(), script.below(static_cast<std::int64_t>(held.size())));
          const std::int64_t more =
              std::min(it->second.final_tokens - it->second.tokens, script.between(1, 40));
          if (!a->can_grow(it->first, more)) {
            preempted[it->first] = it->second;  // out of room: preempt, to come back later
            a->release(it->first);
            held.erase(it);
          } else {
            a->grow(it->first, more);
            it->second.tokens += more;
            if (it->second.tokens == it->second.final_tokens) {
              a->release(it->first);  // finished
              held.erase(it);
            }
          }
        } else if (!held.empty()) {  // preempted to make room for someone else
          auto it = std::next(held.begin(), script.below(static_cast<std::int64_t>(held.size())));
          preempted[it->first] = it->second;
          a->release(it->first);
          held.erase(it);
        }
        check_books(*a, held, script.below(4) == 0 ? 0 : script.between(2, 600));
      }
      REQUIRE(admissions > 100);

      for (const auto& entry : held)
        a->release(entry.first);
      held.clear();
      check_books(*a, held, 0);
      const KvUsage u = a->usage(0);
      REQUIRE(u.free + u.cached == a->capacity_tokens());
      REQUIRE(a->sequences() == 0);
      const KvUsage next = a->usage(kMaxLenTokens);
      REQUIRE(next.external_fragmentation + next.free + next.cached == a->capacity_tokens());
      // With everything back, the largest request that ever fitted fits again.
      REQUIRE(a->can_admit(1, kMaxLenTokens) == a->fits_when_empty(kMaxLenTokens));
    }
  }
}

namespace {

// The plain decode rounds: one grow at a time.
void grow_one_at_a_time(IKvCacheAllocator& allocator, const std::vector<std::int64_t>& sequences,
                        std::int64_t rounds, std::int64_t next_final_tokens,
                        std::vector<KvUsage>& usages) {
  usages.resize(static_cast<std::size_t>(rounds));
  grow_decode_rounds_in_turn(allocator, sequences, next_final_tokens, usages);
}

// The allocator's decode-round fast path, which every built-in allocator implements.
IDecodeRoundAllocator& rounds_of(IKvCacheAllocator& allocator) {
  IDecodeRoundAllocator* rounds = allocator.decode_rounds();
  REQUIRE(rounds != nullptr);
  return *rounds;
}

// The same sequences admitted into both allocators at assorted lengths, each 150 tokens
// short of its final length (paged memory then runs out before they finish), while `a` has
// `min_free_tokens` free and admits them.
std::vector<std::int64_t> admit_alike(IKvCacheAllocator& a, IKvCacheAllocator& b,
                                      std::uint64_t seed, std::int64_t min_free_tokens) {
  std::vector<std::int64_t> sequences;
  std::mt19937_64 random(seed);
  for (std::int64_t id = 0; id < 40 && a.usage(0).free >= min_free_tokens; ++id) {
    const auto tokens = static_cast<std::int64_t>(random() % 140) + 1;
    const std::int64_t final_tokens = tokens + 150;
    if (!a.can_admit(tokens, final_tokens)) break;
    a.admit(id, tokens, final_tokens);
    b.admit(id, tokens, final_tokens);
    sequences.push_back(id);
  }
  return sequences;
}

bool same_usage(const KvUsage& a, const KvUsage& b) {
  return a.capacity_tokens == b.capacity_tokens && a.token_states == b.token_states &&
         a.reserved == b.reserved && a.internal_fragmentation == b.internal_fragmentation &&
         a.external_fragmentation == b.external_fragmentation && a.free == b.free &&
         a.cached == b.cached;
}

}  // namespace

TEST_CASE("decode rounds in bulk leave every allocator as single grows would", "[memory]") {
  for (const auto& configuration : every_configuration()) {
    SECTION(configuration.name) {
      auto bulk = configuration.make();
      auto single = configuration.make();
      const std::vector<std::int64_t> sequences = admit_alike(*bulk, *single, 7, 1500);
      REQUIRE(sequences.size() >= 2);
      const std::int64_t rounds = rounds_of(*bulk).decode_rounds_available(sequences, 150);
      REQUIRE(rounds > 0);
      CHECK(rounds <= 150);
      std::vector<KvUsage> bulk_usages(static_cast<std::size_t>(rounds));
      std::vector<KvUsage> single_usages;
      rounds_of(*bulk).grow_decode_rounds(sequences, 200, bulk_usages);
      grow_one_at_a_time(*single, sequences, rounds, 200, single_usages);
      REQUIRE(bulk_usages.size() == single_usages.size());
      for (std::size_t i = 0; i < bulk_usages.size(); ++i)
        CHECK(same_usage(bulk_usages[i], single_usages[i]));
      CHECK(same_usage(bulk->usage(0), single->usage(0)));
      if (auto* paged = dynamic_cast<PagedAllocator*>(bulk.get())) {
        const auto& other = dynamic_cast<PagedAllocator&>(*single);
        for (const std::int64_t sequence : sequences) {
          CHECK(paged->held_blocks(sequence) == other.held_blocks(sequence));
          CHECK(paged->block_table(sequence) == other.block_table(sequence));
        }
      }
      if (rounds < 150) {
        // The round after the last one granted is refused by single grows.
        bool refused = false;
        for (const std::int64_t sequence : sequences) {
          if (!single->can_grow(sequence, 1)) refused = true;
          if (!refused) single->grow(sequence, 1);
        }
        CHECK(refused);
      }
      for (const std::int64_t sequence : sequences) {
        bulk->release(sequence);
        single->release(sequence);
      }
      // The single grows past the last round may have evicted a cached block the bulk
      // rounds left alone: the same memory is free or cached.
      const KvUsage b = bulk->usage(0);
      const KvUsage s = single->usage(0);
      CHECK(b.used() == s.used());
      CHECK(b.free + b.cached == s.free + s.cached);
    }
  }
}

TEST_CASE("grow_each grows in order up to the first refusal, as try_grow one at a time would",
          "[memory]") {
  for (const auto& configuration : every_configuration()) {
    SECTION(configuration.name) {
      auto batch = configuration.make();
      auto single = configuration.make();
      const std::vector<std::int64_t> sequences = admit_alike(*batch, *single, 11, 0);
      REQUIRE(sequences.size() >= 2);
      bool refused = false;
      for (int round = 0; round < 150 && !refused; ++round) {
        const std::size_t grown = rounds_of(*batch).grow_each(sequences, 1);
        std::size_t single_grown = 0;
        while (single_grown < sequences.size() && single->try_grow(sequences[single_grown], 1))
          ++single_grown;
        REQUIRE(grown == single_grown);
        CHECK(same_usage(batch->usage(0), single->usage(0)));
        refused = grown < sequences.size();
        // Grouping the batch just grown (from grow_each's record on paged memory) agrees with
        // grouping by look-up.
        CHECK(rounds_of(*batch).decode_rounds_available(sequences, 40) ==
              rounds_of(*single).decode_rounds_available(sequences, 40));
      }
      if (auto* paged = dynamic_cast<PagedAllocator*>(batch.get())) {
        CHECK(refused);  // paged memory runs out before the sequences finish
        const auto& other = dynamic_cast<PagedAllocator&>(*single);
        for (const std::int64_t sequence : sequences) {
          CHECK(paged->held_blocks(sequence) == other.held_blocks(sequence));
          CHECK(paged->block_table(sequence) == other.block_table(sequence));
        }
        // A sub-span (the tail of the last batch) is grouped from the record as well.
        const std::span<const std::int64_t> tail(sequences.data() + 1, sequences.size() - 1);
        CHECK(paged->decode_rounds_available(tail, 40) == other.decode_rounds_available(tail, 40));
      }
    }
  }
}

TEST_CASE("batches that change between decode steps grow as single grows would", "[memory]") {
  // The paged allocator keeps the last batch's tables to advance lazily; joins, finishes,
  // preemptions, prefill chunks and bulk rounds between batches must not show.
  for (const auto& configuration : every_configuration()) {
    SECTION(configuration.name) {
      auto batch = configuration.make();
      auto single = configuration.make();
      Script script(424242);
      std::vector<std::int64_t> running;  // in id order, as the schedulers keep it
      std::int64_t next_id = 0;
      std::int64_t decode_steps = 0;
      std::int64_t refusals = 0;  // of the scheduler-like decode steps
      for (int step = 0; step < 2000; ++step) {
        const std::int64_t roll = script.below(100);
        if (roll < 15) {  // a new request joins after the others
          const std::int64_t tokens = script.between(1, 60);
          if (!batch->can_admit(tokens, tokens + 200)) continue;
          batch->admit(next_id, tokens, tokens + 200);
          single->admit(next_id, tokens, tokens + 200);
          running.push_back(next_id++);
        } else if (roll < 25 && !running.empty()) {  // one finishes or is preempted
          const auto at =
              static_cast<std::size_t>(script.below(static_cast<std::int64_t>(running.size())));
          batch->release(running[at]);
          single->release(running[at]);
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(at));
        } else if (roll < 30 && !running.empty()) {  // a prefill chunk for one of them
          const std::int64_t sequence = running[static_cast<std::size_t>(
              script.below(static_cast<std::int64_t>(running.size())))];
          const std::int64_t tokens = script.between(1, 20);
          const bool grew = batch->try_grow(sequence, tokens);
          REQUIRE(grew == single->try_grow(sequence, tokens));
        } else if (roll < 35 && !running.empty()) {  // a decode run in bulk
          const std::int64_t rounds = rounds_of(*batch).decode_rounds_available(running, 20);
          REQUIRE(rounds == rounds_of(*single).decode_rounds_available(running, 20));
          std::vector<KvUsage> batch_usages(static_cast<std::size_t>(rounds));
          std::vector<KvUsage> single_usages;
          rounds_of(*batch).grow_decode_rounds(running, 0, batch_usages);
          grow_one_at_a_time(*single, running, rounds, 0, single_usages);
          for (std::size_t i = 0; i < batch_usages.size(); ++i)
            REQUIRE(same_usage(batch_usages[i], single_usages[i]));
        } else if (roll >= 65 && !running.empty()) {
          // A decode step as the schedulers plan one: at a refusal the newest go until the
          // refused request can grow, and the batch goes on from it (grow_each_after).
          std::size_t next = 0;
          while (next < running.size()) {
            const std::span<const std::int64_t> rest(running.data() + next, running.size() - next);
            const std::size_t grown = next == 0 ? rounds_of(*batch).grow_each(rest, 1)
                                                : rounds_of(*batch).grow_each_after(rest, 1);
            std::size_t single_grown = 0;
            while (single_grown < rest.size() && single->try_grow(rest[single_grown], 1))
              ++single_grown;
            REQUIRE(grown == single_grown);
            REQUIRE(same_usage(batch->usage(40), single->usage(40)));
            next += grown;
            if (next < running.size()) ++refusals;
            while (next < running.size() && !single->can_grow(running[next], 1)) {
              REQUIRE_FALSE(batch->can_grow(running[next], 1));
              batch->release(running.back());
              single->release(running.back());
              running.pop_back();
            }
          }
          ++decode_steps;
        } else if (!running.empty()) {  // a decode step of every running request
          const std::size_t grown = rounds_of(*batch).grow_each(running, 1);
          std::size_t single_grown = 0;
          while (single_grown < running.size() && single->try_grow(running[single_grown], 1))
            ++single_grown;
          REQUIRE(grown == single_grown);
          ++decode_steps;
          if (grown < running.size()) {  // out of memory: the newest goes
            batch->release(running.back());
            single->release(running.back());
            running.pop_back();
          }
        }
        REQUIRE(same_usage(batch->usage(40), single->usage(40)));
        REQUIRE(batch->sequences() == single->sequences());
        if (auto* paged = dynamic_cast<PagedAllocator*>(batch.get())) {
          const auto& other = dynamic_cast<PagedAllocator&>(*single);
          for (const std::int64_t sequence : running) {
            REQUIRE(paged->held_blocks(sequence) == other.held_blocks(sequence));
            REQUIRE(paged->block_table(sequence) == other.block_table(sequence));
            REQUIRE(paged->can_grow(sequence, 17) == other.can_grow(sequence, 17));
          }
        }
      }
      CHECK(next_id > 100);
      CHECK(decode_steps > 500);
      // Paged memory runs out under the script (contiguous reservations hold their room).
      if (dynamic_cast<PagedAllocator*>(batch.get()) != nullptr) CHECK(refusals > 10);
    }
  }
}
