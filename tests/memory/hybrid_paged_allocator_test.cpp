#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/error.h"
#include "sim/memory/impl/hybrid_paged_allocator.h"
#include "sim/memory/kv_capacity.h"
#include "sim/memory/kv_pool_layout.h"
#include "tests/support/test_support.h"

using namespace servesim;

namespace {

KvGroup attention(KvGroupKind kind, std::int64_t layers, double bytes_per_layer_token,
                  std::int64_t window = 0) {
  KvGroup g;
  g.kind = kind;
  g.layers = layers;
  g.bytes_per_token = static_cast<double>(layers) * bytes_per_layer_token;
  g.window_tokens = window;
  return g;
}

KvGroup recurrent(std::int64_t layers, double state_bytes_per_layer) {
  KvGroup g;
  g.kind = KvGroupKind::RecurrentState;
  g.layers = layers;
  g.state_bytes_per_sequence = static_cast<double>(layers) * state_bytes_per_layer;
  return g;
}

// gpt-oss-120b on one GPU: 18 full and 18 sliding-window (128 tokens) layers of 2,048 B a token.
KvPoolLayout gpt_oss_layout() {
  return kv_pool_layout({attention(KvGroupKind::FullAttention, 18, 2048),
                         attention(KvGroupKind::SlidingWindow, 18, 2048, 128)},
                        16);
}

void check_partition(const HybridPagedAllocator& a) {
  const KvUsage u = a.usage(0);
  CHECK(u.token_states >= 0);
  CHECK(u.internal_fragmentation >= 0);
  CHECK(u.used() + u.external_fragmentation + u.free + u.cached == u.capacity_tokens);
  std::int64_t held = 0;
  for (std::size_t g = 0; g < a.layout().groups.size(); ++g)
    held += a.group_blocks(g);
  // The tables' holdings count a block shared by a prefix hit once per holder.
  CHECK(held - a.extra_holders() + a.free_blocks() == a.total_blocks());
}

}  // namespace

TEST_CASE("vLLM's groups: gpt-oss's two kinds of 18 layers share one pool of 18-page blocks",
          "[memory][hybrid]") {
  const KvPoolLayout l = gpt_oss_layout();
  REQUIRE(l.groups.size() == 2);
  CHECK(l.per_group());
  CHECK(l.layers_per_group == 18);
  CHECK(l.page_bytes == 16.0 * 2048);
  CHECK(l.block_bytes() == 18.0 * 16 * 2048);
  CHECK(l.blocks_in(10.0 * l.block_bytes() + 1) == 10);
  CHECK(l.reported_tokens(1001) == 500 * 16);  // 1,001 blocks over 2 groups
  CHECK(l.blocks_for_reported_tokens(8000) == 1000);

  // Gemma 3 (5 sliding to 1 full): 52 + 10 layers are 6 sliding groups (padded to 60) and one
  // full group of 10 layers each; 12 + 13 layers (within 1.5x) are one group each of 13.
  const KvPoolLayout gemma = kv_pool_layout({attention(KvGroupKind::FullAttention, 10, 512),
                                             attention(KvGroupKind::SlidingWindow, 52, 512, 1024)},
                                            16);
  CHECK(gemma.layers_per_group == 10);
  REQUIRE(gemma.groups.size() == 7);
  std::int64_t sliding_layers = 0;
  for (const KvPoolGroup& g : gemma.groups) {
    if (g.kind == KvGroupKind::SlidingWindow) sliding_layers += g.layers;
  }
  CHECK(sliding_layers == 52);
  const KvPoolLayout close = kv_pool_layout({attention(KvGroupKind::FullAttention, 13, 512),
                                             attention(KvGroupKind::SlidingWindow, 12, 512, 128)},
                                            16);
  CHECK(close.layers_per_group == 13);
  CHECK(close.groups.size() == 2);

  // One full-attention group: no per-group tables (the plain paged allocator serves it).
  CHECK_FALSE(kv_pool_layout({attention(KvGroupKind::FullAttention, 32, 2048)}, 16).per_group());
  REQUIRE_THROWS_AS(kv_pool_layout({attention(KvGroupKind::FullAttention, 32, 2048)}, 0),
                    InputError);
}

TEST_CASE("a sliding-window group frees the blocks behind its window while the full group grows",
          "[memory][hybrid]") {
  HybridPagedAllocator a(gpt_oss_layout(), 1000, 0.0);
  a.admit(1, 100, 3000);  // a 100-token prompt: 7 blocks in each group
  CHECK(a.group_blocks(0) == 7);
  CHECK(a.group_blocks(1) == 7);
  check_partition(a);
  std::int64_t most_in_window = 0;
  for (std::int64_t tokens = 100; tokens < 3000; ++tokens) {
    REQUIRE(a.try_grow(1, 1));
    most_in_window = std::max(most_in_window, a.group_blocks(1));
    // The full group holds every token; the window at most W / block + 1 blocks (a window
    // that starts inside a block spans one more).
    REQUIRE(a.group_blocks(0) == (tokens + 1 + 15) / 16);
    REQUIRE(a.group_blocks(1) <= 128 / 16 + 1);
  }
  CHECK(most_in_window == 9);
  CHECK(a.block_table(1, 1).size() == static_cast<std::size_t>(a.group_blocks(1)));
  check_partition(a);
  // The tokens held are the full group's 3,000 and the window group's live ones.
  const KvUsage u = a.usage(0);
  CHECK(u.token_states == 3000 + (3000 - (2999 - 127) / 16 * 16));
  a.release(1);
  CHECK(a.free_blocks() == 1000);
  CHECK(a.usage(0).token_states == 0);
  CHECK(a.sequences() == 0);
}

TEST_CASE("decode grows one token at a time keep every group's blocks and states exact",
          "[memory][hybrid]") {
  // Most of these grows free and take nothing (the O(1) path); every 16th takes a block, and
  // the window (128) and the chunk (64) free behind them: the books follow the rules at
  // every token.
  const KvPoolLayout chunked = kv_pool_layout({attention(KvGroupKind::FullAttention, 12, 512),
                                               attention(KvGroupKind::ChunkedLocal, 12, 512, 64)},
                                              16);
  // A chunk of 72 tokens, not whole blocks: every grow takes the general path.
  const KvPoolLayout odd = kv_pool_layout({attention(KvGroupKind::FullAttention, 12, 512),
                                           attention(KvGroupKind::ChunkedLocal, 12, 512, 72)},
                                          16);
  for (const KvPoolLayout& l : {gpt_oss_layout(), chunked, odd}) {
    const KvPoolGroup& local = l.groups[1];
    HybridPagedAllocator a(l, 1000, 0.0);
    a.admit(1, 100, 1000);
    for (std::int64_t tokens = 100; tokens < 700; ++tokens) {
      REQUIRE(a.try_grow(1, 1));
      const std::int64_t after = tokens + 1;
      // The blocks before the one the grow's first token needed are freed.
      const std::int64_t skipped =
          local.kind == KvGroupKind::SlidingWindow
              ? std::max<std::int64_t>(0, tokens - local.window_tokens + 1) / 16
              : tokens / local.window_tokens * local.window_tokens / 16;
      const std::int64_t spanned = (after + 15) / 16;
      INFO("tokens " << after);
      REQUIRE(a.group_blocks(0) == spanned);
      REQUIRE(a.group_blocks(1) == spanned - skipped);
      REQUIRE(a.usage(0).token_states == after + (after - skipped * 16));
    }
    check_partition(a);
    a.release(1);
    CHECK(a.free_blocks() == 1000);
  }
}

TEST_CASE("blocks are conserved across groups under admission, growth, failure and release",
          "[memory][hybrid]") {
  HybridPagedAllocator a(gpt_oss_layout(), 64, 0.0);
  // A 256-token prompt holds 16 blocks in each group.
  a.admit(1, 256, 1024);
  a.admit(2, 256, 1024);
  CHECK(a.free_blocks() == 0);
  CHECK_FALSE(a.can_admit(1, 1));
  // Sequence 1's next token frees the window blocks before token 256 - 127 (8 blocks) and
  // needs one block in each group: it fits in the freed ones.
  CHECK(a.can_grow(1, 1));
  REQUIRE(a.try_grow(1, 1));
  CHECK(a.group_blocks(1) == 16 + 9);
  check_partition(a);
  // A chunk of 2,000 tokens does not fit: the failed attempt still frees sequence 2's window.
  CHECK_FALSE(a.try_grow(2, 2000));
  CHECK(a.group_blocks(1) == 9 + 8);
  check_partition(a);
  REQUIRE_THROWS_AS(a.grow(2, 2000), InvariantError);
  REQUIRE_THROWS_AS(a.admit(1, 1, 1), InvariantError);  // admitted already
  a.release(1);
  a.release(2);
  CHECK(a.free_blocks() == 64);
  REQUIRE_THROWS_AS(a.release(2), InvariantError);
  REQUIRE_THROWS_AS(HybridPagedAllocator(gpt_oss_layout(), 1), InfeasibleError);
}

TEST_CASE("a chunked-local group frees the blocks of past chunks", "[memory][hybrid]") {
  // Llama 4 Scout's pattern: 3 chunked (8,192 tokens) layers to 1 full, 48 layers.
  const KvPoolLayout l = kv_pool_layout({attention(KvGroupKind::FullAttention, 12, 512),
                                         attention(KvGroupKind::ChunkedLocal, 36, 512, 8192)},
                                        16);
  REQUIRE(l.groups.size() == 4);  // one full, three chunked groups of 12 layers
  HybridPagedAllocator a(l, 100000, 0.0);
  a.admit(7, 8000, 20000);
  CHECK(a.group_blocks(1) == 500);
  a.grow(7, 192);  // 8,192 tokens: the first chunk is full
  CHECK(a.group_blocks(1) == 512);
  a.grow(7, 1);  // the next token starts a chunk: the first chunk's blocks are freed
  CHECK(a.group_blocks(0) == 513);
  CHECK(a.group_blocks(1) == 1);
  CHECK(a.group_blocks(3) == 1);
  check_partition(a);
}

TEST_CASE("a recurrent model's capacity in sequences matches the hand computation",
          "[memory][hybrid]") {
  // 4 full-attention layers of 512 B a token, 12 recurrent layers of 100,000 B of state.
  const KvPoolLayout l =
      kv_pool_layout({attention(KvGroupKind::FullAttention, 4, 512), recurrent(12, 100000)}, 16);
  // The attention block grows until its page holds a state: 16 x ceil(100,000 / (16 x 512)).
  CHECK(l.block_tokens == 208);
  CHECK(l.page_bytes == 208.0 * 512);
  CHECK(l.layers_per_group == 4);
  REQUIRE(l.groups.size() == 4);  // one full group, three recurrent groups of 4 layers
  // A sequence of 1,000 tokens: ceil(1000 / 208) = 5 attention blocks + 3 states.
  CHECK(l.max_blocks_per_sequence(1000, 8192) == 8);
  HybridPagedAllocator a(l, 800, 0.0);
  std::int64_t admitted = 0;
  while (a.can_admit(1000, 1000))
    a.admit(admitted++, 1000, 1000);
  CHECK(admitted == 800 / 8);
  CHECK(a.free_blocks() == 0);
  check_partition(a);
  // States do not grow: 40 more tokens each stay inside the fifth attention block.
  CHECK(a.can_grow(0, 40));
  CHECK_FALSE(a.can_grow(0, 41));
}

TEST_CASE("the plan cuts gpt-oss-120b's KV as vLLM does and reports its token figure",
          "[memory][hybrid]") {
  const HardwareProfile hw = test::shipped_hardware("h200");
  KvCapacityOptions o;
  o.weight_dtype = DType::FP4;
  const KvCapacity c = plan_kv_capacity(test::shipped_model("gpt-oss-120b"), hw, o);
  REQUIRE(c.pools.per_group());
  CHECK(c.pools.layers_per_group == 18);
  CHECK(c.pool_blocks == static_cast<std::int64_t>(c.kv_bytes_per_gpu / (16.0 * 2048) / 18));
  CHECK(c.kv_capacity_tokens == c.pool_blocks / 2 * 16);
  // vLLM's Maximum concurrency at 131,072 tokens: blocks over 8,192 full-group blocks and
  // ceil((127 + 8,192) / 16) + 1 = 521 window blocks.
  CHECK(sequences_at_length(c, o, 131072) == c.pool_blocks / (8192 + 521));
  const KvCapacity llama = plan_kv_capacity(test::shipped_model("llama-3-8b"), hw, o);
  CHECK_FALSE(llama.pools.per_group());
  CHECK(llama.pool_blocks == 0);
}

TEST_CASE("a gpt-oss run over per-group pools serves every request and partitions its memory",
          "[memory][hybrid]") {
  // 20,000 reported tokens: 2,500 blocks of 16 tokens over 2 groups. 64 sequences of 1,500
  // tokens would need 94 x 2 blocks each if both groups kept every token; the window group
  // keeps 9, so the run preempts less than such a cache would.
  const auto r = test::run_servesim({"run", "--model", "gpt-oss-20b", "--hw", "h100-sxm", "--set",
                                     "memory.kv_capacity_tokens=20000", "--prompt-tokens", "1000",
                                     "--output-tokens", "500", "--rate", "inf", "--num-requests",
                                     "64", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  CHECK(j["requests_completed"] == 64);
  double shares = 0;
  for (const char* key : {"token_states", "reserved", "internal_fragmentation",
                          "external_fragmentation", "free", "cached"})
    shares += j["kv_memory"][key].get<double>();
  CHECK(shares == Approx(1.0).epsilon(1e-6));
  CHECK(j["kv_memory"]["token_states"].get<double>() > 0);
}

TEST_CASE("per-group pools hit a shared prefix as vLLM does and refuse a host tier in one line",
          "[memory][hybrid]") {
  // inference-perf's shared-prefix load: 100-token system prompts. gpt-oss's window group
  // finds no full window (8 blocks) before a 6-block hit, so the hit is its leading run from
  // block 0, as long as the full group's: the same hit rate as a full-attention model.
  // Llama 4 Scout's chunks (8,192 tokens) hold every prompt: its hit rate is the same too.
  // Qwen3-Next's recurrent states are not cached (vLLM keeps them at chosen positions only).
  const std::string workload =
      (test::source_dir() / "workloads" / "inference-perf-general.json").string();
  const auto hit_rate = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--workload", workload, "--enable-prefix-caching", "--json"});
    const auto r = test::run_servesim(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.json()["requests_completed"] == 16800);
    return r.json()["prefix_cache_hit_rate"].get<double>();
  };
  const double llama = hit_rate({"run", "--model", "llama-3.1-8b", "--hw", "h100-sxm"});
  CHECK(llama > 0.1);
  CHECK(hit_rate({"run", "--model", "gpt-oss-20b", "--hw", "h100-sxm"}) == Approx(llama));
  // vLLM does not start Llama 4 Scout at its 10M-token default length on four H100s.
  CHECK(hit_rate({"run", "--model", "llama-4-scout", "--hw", "h100-sxm", "--tp", "4", "--max-len",
                  "131072"}) == Approx(llama));
  CHECK(hit_rate({"run", "--model", "qwen3-next-80b-a3b", "--hw", "h200", "--tp", "2"}) == 0);
  test::require_error(
      test::run_servesim({"run", "--model", "gpt-oss-20b", "--num-requests", "4",
                          "--enable-prefix-caching", "--set", "memory.host_cache_gib=1"}),
      3,
      "memory.host_cache_gib: a host tier of the prefix cache is not modelled for a model with "
      "windowed or recurrent layer groups");
}

TEST_CASE("a hit needs the window's blocks before the hit point (vLLM's sliding-window rule)",
          "[memory][hybrid]") {
  HybridPagedAllocator a(gpt_oss_layout(), 1000, 0.0, true);
  REQUIRE(a.prefix_block_tokens() == 16);
  std::vector<std::uint64_t> hashes;
  for (std::uint64_t i = 0; i < 30; ++i)
    hashes.push_back(1000 + i);
  const std::span<const std::uint64_t> twenty(hashes.data(), 20);
  // Sequence 1 computes 321 tokens; its next token frees the window blocks 0..11 before they
  // are named, then the step completes and names what is left: full 0..19, window 12..19.
  a.admit_prefix(PrefixKey{1, twenty, 321}, 321, 400);
  REQUIRE(a.try_grow(1, 1));
  a.commit_computed(1, 322);
  a.release(1);
  CHECK(a.usage(0).cached == (20 + 8) * 16);
  check_partition(a);
  // The same 20 blocks: the full group hits 20, the window group holds the 8 blocks before.
  CHECK(a.cached_prefix_tokens(PrefixKey{2, twenty, 400}) == 320);
  // The first 10 blocks only: the full group hits 10, but the window's blocks 2..9 were
  // never named, and no leading run from block 0 either: nothing is hit.
  std::vector<std::uint64_t> other(hashes.begin(), hashes.begin() + 10);
  other.push_back(7);  // then different content
  CHECK(a.cached_prefix_tokens(PrefixKey{3, other, 400}) == 0);
  // Admitting the 20-block hit shares 20 full blocks and the window's 8, skipping 0..11.
  REQUIRE(a.can_admit_prefix(PrefixKey{2, twenty, 330}, 330, 400));
  const PrefixAdmission hit = a.admit_prefix(PrefixKey{2, twenty, 330}, 330, 400);
  CHECK(hit.cached_tokens == 320);
  CHECK(a.group_blocks(0) == 21);
  CHECK(a.group_blocks(1) == 9);
  CHECK(a.block_table(2, 1).size() == 9);
  check_partition(a);
  // A second holder of the same blocks counts their tokens once.
  a.admit_prefix(PrefixKey{4, twenty, 330}, 330, 400);
  CHECK(a.usage(0).token_states == 2 * 330 + 2 * (330 - 12 * 16) - 20 * 16 - 8 * 16);
  check_partition(a);
  a.release(2);
  a.release(4);
  CHECK(a.free_blocks() == 1000);
  check_partition(a);
}

TEST_CASE("a hit needs the blocks of its chunk before it (vLLM's chunked-local rule)",
          "[memory][hybrid]") {
  // One full and one chunked-local group (chunks of 64 tokens: 4 blocks of 16).
  const KvPoolLayout l = kv_pool_layout({attention(KvGroupKind::FullAttention, 12, 512),
                                         attention(KvGroupKind::ChunkedLocal, 12, 512, 64)},
                                        16);
  REQUIRE(l.groups.size() == 2);
  HybridPagedAllocator a(l, 1000, 0.0, true);
  REQUIRE(a.prefix_block_tokens() == 16);
  std::vector<std::uint64_t> hashes;
  for (std::uint64_t i = 0; i < 12; ++i)
    hashes.push_back(500 + i);
  // Sequence 1 computes 200 tokens; its next token frees the chunked blocks 0..11 (the three
  // chunks before token 200's) before they are named, then the step names the full group's
  // blocks 0..11 and nothing of the chunked group.
  a.admit_prefix(PrefixKey{1, hashes, 200}, 200, 300);
  REQUIRE(a.try_grow(1, 1));
  CHECK(a.group_blocks(1) == 1);
  a.commit_computed(1, 201);
  a.release(1);
  check_partition(a);
  // 12 blocks end on a chunk boundary: the chunked group needs none of them.
  CHECK(a.cached_prefix_tokens(PrefixKey{2, hashes, 300}) == 192);
  // 10 blocks would need the chunk's blocks 8 and 9, never named: the hit falls back to the
  // chunk's start, 8 blocks, which needs none again.
  std::vector<std::uint64_t> ten(hashes.begin(), hashes.begin() + 10);
  ten.push_back(9);  // then different content
  CHECK(a.cached_prefix_tokens(PrefixKey{3, ten, 300}) == 128);

  // Sequence 4 computes 170 tokens and names them before its chunk moves on: the full
  // group's blocks 0..9 and the chunked group's too (its blocks 0..7 freed on the next token,
  // named already).
  std::vector<std::uint64_t> fresh;
  for (std::uint64_t i = 0; i < 12; ++i)
    fresh.push_back(900 + i);
  a.admit_prefix(PrefixKey{4, fresh, 170}, 170, 300);
  a.commit_computed(4, 170);
  REQUIRE(a.try_grow(4, 1));
  CHECK(a.group_blocks(1) == 11 - 8);
  a.release(4);
  // Ten blocks: the chunk starting at block 8 holds 8 and 9: a hit of 160 tokens, sharing the
  // full group's 10 blocks and the chunked group's 2, skipping its first 8.
  REQUIRE(a.can_admit_prefix(PrefixKey{5, fresh, 200}, 200, 300));
  const PrefixAdmission hit = a.admit_prefix(PrefixKey{5, fresh, 200}, 200, 300);
  CHECK(hit.cached_tokens == 160);
  CHECK(a.block_table(5, 0).size() == 13);
  CHECK(a.block_table(5, 1).size() == 13 - 8);
  check_partition(a);
  a.release(5);
  CHECK(a.free_blocks() == 1000);
}

TEST_CASE("servesim kv --hw reports the pools, vLLM's figure and its concurrency",
          "[memory][hybrid]") {
  const auto r = test::run_servesim({"kv", "--model", "gpt-oss-120b", "--hw", "h200",
                                     "--weight-dtype", "fp4", "--max-len", "131072", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  REQUIRE(j.contains("kv_pools"));
  const auto& pools = j["kv_pools"];
  CHECK(pools["groups"].size() == 2);
  CHECK(pools["layers_per_group"] == 18);
  CHECK(pools["block_tokens"] == 16);
  CHECK(pools["block_bytes"] == 18 * 16 * 2048);
  const auto blocks = pools["blocks"].get<std::int64_t>();
  CHECK(j["kv_capacity_tokens"] == blocks / 2 * 16);
  CHECK(j["vllm_kv_cache_size_tokens"] == j["kv_capacity_tokens"]);
  CHECK(j["max_sequences_at_max_len"] == blocks / (8192 + 521));
  // A larger block: the same bytes in fewer, larger blocks.
  const auto big = test::run_servesim({"kv", "--model", "gpt-oss-120b", "--hw", "h200",
                                       "--weight-dtype", "fp4", "--block-size", "64", "--json"});
  REQUIRE(big.exit_code == 0);
  CHECK(big.json()["kv_pools"]["blocks"].get<std::int64_t>() == Approx(blocks / 4).margin(1));

  // One full-attention group: no pools, vLLM's figure the capacity in whole blocks.
  const auto llama =
      test::run_servesim({"kv", "--model", "llama-3-8b", "--hw", "h100-sxm", "--json"}).json();
  CHECK_FALSE(llama.contains("kv_pools"));
  CHECK(llama["vllm_kv_cache_size_tokens"] ==
        llama["kv_capacity_tokens"].get<std::int64_t>() / 16 * 16);
}
