// Prefix caching's books under a random script of admissions with content, hits, growth,
// releases and preemptions: holders, shared blocks and the usage categories.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "sim/memory/impl/paged_allocator.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/workload/token_content.h"
#include "tests/support/allocator_script.h"

using namespace servesim;
using test::Script;

namespace {

constexpr std::int64_t kCapacityTokens = 6000;

// A sequence of the prefix-caching script: its content's block identities and its tokens.
struct Cached {
  std::vector<std::uint64_t> hashes;
  std::int64_t tokens = 0;
  std::int64_t final_tokens = 0;
};

// Every block held by several sequences sits at the same place in each and holds the same
// content there: a block is shared only by a hit, never handed out fresh to two holders.
void check_sharing(const PagedAllocator& a, const std::map<std::int64_t, Cached>& held) {
  struct Place {
    std::int64_t sequence;
    std::size_t index;
  };
  const KvUsage u = a.usage(0);
  if (!a.block_ids_known()) {
    // No name yet, so no hit: every block held has one holder.
    std::int64_t blocks = 0;
    for (const auto& entry : held)
      blocks += a.held_blocks(entry.first);
    REQUIRE(blocks * a.block_size() == u.used());
    return;
  }
  std::map<std::int32_t, Place> first_holder;
  std::int64_t slots = 0;
  for (const auto& [id, s] : held) {
    const auto& blocks = a.block_table(id);
    REQUIRE(static_cast<std::int64_t>(blocks.size()) == a.held_blocks(id));
    slots += static_cast<std::int64_t>(blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const auto [it, fresh] = first_holder.try_emplace(blocks[i], Place{id, i});
      if (fresh) continue;
      const Place& other = it->second;
      REQUIRE(other.index == i);
      const Cached& o = held.at(other.sequence);
      REQUIRE(i < s.hashes.size());
      REQUIRE(i < o.hashes.size());
      REQUIRE(s.hashes[i] == o.hashes[i]);
    }
  }
  // Distinct blocks held: the used blocks.
  REQUIRE(static_cast<std::int64_t>(first_holder.size()) * a.block_size() == u.used());
  REQUIRE(slots >= static_cast<std::int64_t>(first_holder.size()));
}

}  // namespace

TEST_CASE("prefix caching keeps its books: holders, shared blocks, categories", "[memory]") {
  for (const std::int64_t block_size : {1, 16, 128}) {
    SECTION("paged+prefix/" + std::to_string(block_size)) {
      PagedAllocator a(kCapacityTokens, block_size, 0.01, true);
      Script script(777 + static_cast<std::uint64_t>(block_size));
      std::map<std::int64_t, Cached> held;
      std::map<std::int64_t, Cached> preempted;
      std::int64_t next_id = 0;
      std::int64_t hits = 0;
      for (int step = 0; step < 3000; ++step) {
        const std::int64_t roll = script.below(100);
        if (roll < 30) {  // a new request from one of a few prompts, or a preempted one
          Cached s;
          std::int64_t id = next_id;
          if (!preempted.empty() && script.below(2) == 0) {
            id = preempted.begin()->first;
            s = preempted.begin()->second;
          } else {
            s.final_tokens = script.between(2, 600);
            s.tokens = script.between(1, s.final_tokens - 1);
            // A shared system prompt of 4 kinds, then tokens of its own.
            const TokenContent content{
                {static_cast<std::uint64_t>(script.below(4)), script.between(1, 300)},
                {100000 + static_cast<std::uint64_t>(id), 400}};
            s.hashes = block_hashes(content, block_size);
            if (!a.fits_when_empty(s.final_tokens)) continue;
          }
          // The allocator reads the hashes until the sequence is released: the copy in
          // `held` is the one it keeps.
          const auto [it, fresh] = held.insert_or_assign(id, s);
          REQUIRE(fresh);
          const PrefixKey key{id, it->second.hashes, s.tokens};
          const std::int64_t cached = a.cached_prefix_tokens(key);
          REQUIRE(cached % block_size == 0);
          REQUIRE(cached < s.tokens);
          if (!a.can_admit_prefix(key, s.tokens, s.final_tokens)) {
            held.erase(it);
            continue;
          }
          REQUIRE(a.admit_prefix(key, s.tokens, s.final_tokens).cached_tokens == cached);
          hits += cached > 0 ? 1 : 0;
          preempted.erase(id);
          if (id == next_id) ++next_id;
        } else if (roll < 90 && !held.empty()) {  // a step computes, then grows
          auto it = std::next(held.begin(), script.below(static_cast<std::int64_t>(held.size())));
          a.commit_computed(it->first, it->second.tokens);
          const std::int64_t more =
              std::min(it->second.final_tokens - it->second.tokens, script.between(1, 40));
          if (!a.can_grow(it->first, more)) {
            preempted[it->first] = it->second;
            a.release(it->first);
            held.erase(it);
          } else {
            a.grow(it->first, more);
            it->second.tokens += more;
            if (it->second.tokens == it->second.final_tokens) {
              a.release(it->first);
              held.erase(it);
            }
          }
        } else if (!held.empty()) {
          auto it = std::next(held.begin(), script.below(static_cast<std::int64_t>(held.size())));
          preempted[it->first] = it->second;
          a.release(it->first);
          held.erase(it);
        }
        const KvUsage u = a.usage(0);
        REQUIRE(u.used() + u.free + u.cached == u.capacity_tokens);
        REQUIRE(u.cached >= 0);
        REQUIRE(u.token_states >= 0);
        REQUIRE(u.internal_fragmentation >= 0);
        check_sharing(a, held);
      }
      REQUIRE(hits > 20);
      for (const auto& entry : held)
        a.release(entry.first);
      const KvUsage u = a.usage(0);
      REQUIRE(u.used() == 0);
      REQUIRE(u.free + u.cached == a.capacity_tokens());
      REQUIRE(u.cached > 0);
      // A sequence released already holds nothing to release.
      REQUIRE_THROWS(a.release(0));
    }
  }
}
