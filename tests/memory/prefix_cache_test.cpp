#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "sim/memory/impl/paged_allocator.h"
#include "sim/workload/token_content.h"

using namespace servesim;

namespace {

constexpr std::int64_t kBlock = 16;

// A paged allocator with prefix caching and no watermark, of `blocks` blocks.
PagedAllocator caching(std::int64_t blocks) {
  return PagedAllocator(blocks * kBlock, kBlock, 0.0, true);
}

std::vector<std::uint64_t> hashes_of(const TokenContent& content) {
  return block_hashes(content, kBlock);
}

PrefixKey key(std::int64_t sequence, const std::vector<std::uint64_t>& hashes,
              std::int64_t tokens) {
  return PrefixKey{sequence, hashes, tokens};
}

// Admits a whole prompt of `tokens` as the schedulers do: the look-up, then the admission;
// returns the tokens found cached.
std::int64_t admit_prompt(PagedAllocator& a, std::int64_t sequence,
                          const std::vector<std::uint64_t>& hashes, std::int64_t tokens) {
  const PrefixKey k = key(sequence, hashes, tokens);
  const std::int64_t looked_up = a.cached_prefix_tokens(k);
  REQUIRE(a.can_admit_prefix(k, tokens, tokens + 10));
  const std::int64_t cached = a.admit_prefix(k, tokens, tokens + 10).cached_tokens;
  REQUIRE(cached == looked_up);
  return cached;
}

void check_partition(const PagedAllocator& a) {
  const KvUsage u = a.usage(0);
  REQUIRE(u.cached >= 0);
  REQUIRE(u.free >= 0);
  REQUIRE(u.token_states >= 0);
  REQUIRE(u.internal_fragmentation >= 0);
  REQUIRE(u.used() + u.external_fragmentation + u.free + u.cached == u.capacity_tokens);
}

}  // namespace

TEST_CASE("a shared system prompt: every request but the first hits its full blocks",
          "[memory][prefix]") {
  PagedAllocator a = caching(200);
  REQUIRE(a.prefix_block_tokens() == kBlock);
  constexpr std::int64_t kSystem = 100;  // 6 full blocks of 16, and 4 tokens of a seventh
  for (std::int64_t id = 0; id < 5; ++id) {
    // The system prompt, then 50 tokens of the request's own.
    const auto hashes = hashes_of({{7, kSystem}, {1000 + static_cast<std::uint64_t>(id), 50}});
    const std::int64_t cached = admit_prompt(a, id, hashes, kSystem + 50);
    CHECK(cached == (id == 0 ? 0 : (kSystem / kBlock) * kBlock));
    a.commit_computed(id, kSystem + 50);
    check_partition(a);
  }
  // Five holders of the six shared blocks: their slots hold one token state each.
  const KvUsage u = a.usage(0);
  CHECK(u.token_states == 5 * 150 - 4 * 96);
  for (std::int64_t id = 0; id < 5; ++id)
    a.release(id);
  check_partition(a);
  // What stays cached: the shared blocks once, and each request's own full blocks (its
  // blocks past the system prompt are named too: 150 tokens fill 9 blocks, 6 shared).
  CHECK(a.usage(0).cached == (6 + 5 * 3) * kBlock);
  CHECK(a.usage(0).used() == 0);
}

TEST_CASE("a hit leaves at least the last prompt token to compute", "[memory][prefix]") {
  PagedAllocator a = caching(50);
  const auto hashes = hashes_of({{3, 64}});  // exactly 4 blocks
  admit_prompt(a, 0, hashes, 64);
  a.commit_computed(0, 64);
  a.release(0);
  // vLLM: at most num_tokens - 1 cached, in whole blocks: 3 of the 4.
  CHECK(a.cached_prefix_tokens(key(1, hashes, 64)) == 48);
  CHECK(a.cached_prefix_tokens(key(1, hashes, 65)) == 64);
}

TEST_CASE("only blocks computed before the look-up are hit", "[memory][prefix]") {
  PagedAllocator a = caching(50);
  const auto hashes = hashes_of({{9, 200}});
  admit_prompt(a, 0, hashes, 96);  // a first chunk, not yet computed
  CHECK(a.cached_prefix_tokens(key(1, hashes, 200)) == 0);
  a.commit_computed(0, 40);  // two full blocks computed
  CHECK(a.cached_prefix_tokens(key(1, hashes, 200)) == 32);
  a.commit_computed(0, 96);
  CHECK(a.cached_prefix_tokens(key(1, hashes, 200)) == 96);
  // A sequence without content looks nothing up.
  CHECK(a.cached_prefix_tokens(key(2, {}, 200)) == 0);
}

TEST_CASE("eviction takes the least recently freed blocks first, a request's tail first",
          "[memory][prefix]") {
  PagedAllocator a = caching(8);
  const auto first = hashes_of({{1, 80}});
  const auto second = hashes_of({{2, 80}});
  admit_prompt(a, 0, first, 64);
  admit_prompt(a, 1, second, 64);
  a.commit_computed(0, 64);
  a.commit_computed(1, 64);
  a.release(0);  // the free queue: 0's blocks tail first, then 1's
  a.release(1);
  CHECK(a.usage(0).cached == 8 * kBlock);
  CHECK(a.cached_prefix_tokens(key(5, first, 80)) == 64);
  // A request without content takes fresh blocks: each evicts the front of the queue.
  const std::vector<std::uint64_t> none;
  for (std::int64_t taken = 1; taken <= 4; ++taken) {
    REQUIRE(a.can_admit(kBlock, kBlock + 1));
    a.admit(10 + taken, kBlock, kBlock + 1);
    CHECK(a.cached_prefix_tokens(key(5, first, 80)) == (4 - taken) * kBlock);
    CHECK(a.cached_prefix_tokens(key(6, second, 80)) == 64);
    CHECK(a.usage(0).cached == (8 - taken) * kBlock);
  }
  a.admit(20, kBlock, kBlock + 1);
  CHECK(a.cached_prefix_tokens(key(6, second, 80)) == 48);  // its tail went first
  check_partition(a);
}

TEST_CASE("a hit on a free cached block takes it out of the free queue", "[memory][prefix]") {
  PagedAllocator a = caching(8);
  const auto hashes = hashes_of({{1, 80}});
  admit_prompt(a, 0, hashes, 64);
  a.commit_computed(0, 64);
  a.release(0);
  // 4 hit blocks are revived and 2 more taken for 96 tokens; fresh blocks come from the
  // front of the queue without evicting the revived ones.
  CHECK(admit_prompt(a, 1, hashes, 96) == 64);
  CHECK(a.free_blocks() == 2);
  CHECK(a.usage(0).cached == 0);
  // 6 blocks held, 2 free: 2 more blocks, but not 3.
  CHECK(a.can_admit(2 * kBlock, 2 * kBlock));
  CHECK_FALSE(a.can_admit(2 * kBlock + 1, 2 * kBlock + 1));
  // A hit on free blocks counts them as taken: 4 cached free blocks and 4 empty ones hold a
  // hit of 4 plus 4 fresh, not 5.
  PagedAllocator b = caching(8);
  admit_prompt(b, 0, hashes, 64);
  b.commit_computed(0, 64);
  b.release(0);
  CHECK(b.can_admit_prefix(key(1, hashes, 80), 128, 130));
  CHECK_FALSE(b.can_admit_prefix(key(1, hashes, 80), 129, 130));
}

TEST_CASE("a block whose content is cached already is not named twice", "[memory][prefix]") {
  PagedAllocator a = caching(20);
  const auto hashes = hashes_of({{4, 80}});
  // Both admitted before either computed: neither hits, both compute the same blocks.
  CHECK(admit_prompt(a, 0, hashes, 80) == 0);
  CHECK(admit_prompt(a, 1, hashes, 80) == 0);
  a.commit_computed(0, 80);
  a.commit_computed(1, 80);
  a.release(0);
  a.release(1);
  CHECK(a.usage(0).cached == 5 * kBlock);  // one copy's five blocks
  CHECK(a.free_blocks() == 20);
  check_partition(a);
}

TEST_CASE("a request preempted by recompute hits its own blocks, generated ones too",
          "[memory][prefix]") {
  PagedAllocator a = caching(50);
  const auto hashes = hashes_of({{8, 40}});  // content covers 2 full blocks
  admit_prompt(a, 0, hashes, 40);
  a.grow(0, 60);  // generated tokens: 100 in all
  a.commit_computed(0, 100);
  a.release(0);  // preempted
  // Back with 101 tokens (one more sampled before the preemption): 6 full blocks computed.
  CHECK(a.cached_prefix_tokens(key(0, hashes, 101)) == 96);
  // Its blocks past the content are its own: another request with that content hits 2.
  CHECK(a.cached_prefix_tokens(key(1, hashes, 101)) == 32);
  CHECK(admit_prompt(a, 0, hashes, 101) == 96);
  check_partition(a);
}

TEST_CASE("without prefix caching the paged allocator shares nothing", "[memory][prefix]") {
  PagedAllocator a(50 * kBlock, kBlock, 0.0, false);
  CHECK(a.prefix_block_tokens() == 0);
  const auto hashes = hashes_of({{8, 40}});
  CHECK(admit_prompt(a, 0, hashes, 40) == 0);
  a.commit_computed(0, 40);
  a.release(0);
  CHECK(a.cached_prefix_tokens(key(1, hashes, 40)) == 0);
  CHECK(a.usage(0).cached == 0);
}

TEST_CASE("a host tier keeps blocks evicted from the GPU, least recently used dropped first",
          "[memory][prefix]") {
  // 8 GPU blocks and a host tier of 3.
  PagedAllocator a(8 * kBlock, kBlock, 0.0, true, 3);
  const auto first = hashes_of({{1, 80}});
  admit_prompt(a, 0, first, 65);  // 5 blocks, 4 full ones named
  a.commit_computed(0, 65);
  a.release(0);
  // A request without content takes all 8 blocks: the 4 cached ones are evicted, tail first
  // (blocks 3, 2, 1, 0 of the prompt), and the host keeps the last 3 evicted: 2, 1, 0.
  a.admit(1, 8 * kBlock, 8 * kBlock + 1);
  CHECK(a.usage(0).cached == 0);
  CHECK(a.cached_prefix_tokens(key(2, first, 80)) == 48);
  a.release(1);
  // Admitted from the host: 3 blocks loaded into fresh ones, the rest computed.
  const PrefixKey k = key(2, first, 80);
  REQUIRE(a.can_admit_prefix(k, 80, 90));
  const PrefixAdmission found = a.admit_prefix(k, 80, 90);
  CHECK(found.cached_tokens == 48);
  CHECK(found.host_tokens == 48);
  CHECK(a.free_blocks() == 3);
  check_partition(a);
  // Once computed (loaded) they are named on the GPU again.
  a.commit_computed(2, 80);
  CHECK(a.cached_prefix_tokens(key(3, first, 81)) == 80);
  // Without a host tier the evicted blocks are gone.
  PagedAllocator b = caching(8);
  admit_prompt(b, 0, first, 65);
  b.commit_computed(0, 65);
  b.release(0);
  b.admit(1, 8 * kBlock, 8 * kBlock + 1);
  b.release(1);
  CHECK(b.cached_prefix_tokens(key(2, first, 80)) == 0);
}
