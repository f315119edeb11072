#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/memory/kv_capacity.h"
#include "sim/memory/kv_pool_layout.h"
#include "sim/model/model_size.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::shipped_hardware;
using test::shipped_model;

TEST_CASE("KV capacity is usable memory minus weights and the activation reserve", "[memory]") {
  const ModelSpec m = shipped_model("llama-3-8b");
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  KvCapacityOptions o;
  const KvCapacity c = plan_kv_capacity(m, hw, o);
  const ShardShape shard = shard_model(m, o.parallelism);
  const double activation = hw.runtime_reserved_bytes +
                            8192 * activation_bytes_per_token(m, shard, DType::BF16) +
                            256.0 * 128256 * 4;
  CHECK(c.usable_bytes_per_gpu == Approx(0.9 * hw.memory_capacity_bytes));
  CHECK(c.weight_bytes_per_gpu == weight_bytes(m, DType::BF16));
  CHECK(c.activation_reserve_bytes_per_gpu == Approx(activation));
  CHECK(c.kv_bytes_per_gpu == Approx(c.usable_bytes_per_gpu - c.weight_bytes_per_gpu - activation));
  CHECK(c.kv_capacity_tokens == static_cast<std::int64_t>(c.kv_bytes_per_gpu / 131072));
  // Activation per token: 3 x hidden + QKV width + gate/up (2 x 14336) + activation (14336).
  CHECK(activation_bytes_per_token(m, shard, DType::BF16) == 2.0 * (3 * 4096 + 6144 + 3 * 14336));
  // vLLM reports about 28,000 16-token blocks (~450K tokens) for this pair at 0.9.
  CHECK(c.kv_capacity_tokens > 400000);
  CHECK(c.kv_capacity_tokens < 480000);
}

TEST_CASE("vLLM's profile run counts the larger of the forward's widest phase and the sampler",
          "[memory]") {
  const ModelSpec m = shipped_model("llama-2-7b");
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  KvCapacityOptions o;
  o.weight_dtype = DType::FP16;
  o.kv_dtype = DType::FP16;
  o.accounting = ActivationAccounting::ProfileRun;
  o.max_batched_tokens = 2048;
  o.max_sequences = 128;
  o.non_torch_bytes = 1e8;
  o.sampler_bytes_per_logit = 38;
  const KvCapacity c = plan_kv_capacity(m, hw, o);
  // The forward: residual and normed input (2 x 4096) and the MLP phase (gate/up 2 x 11008
  // and the activation 11008), wider than the attention phase (QKV 3 x 4096 and its output).
  const double forward = 2048 * 2.0 * (2 * 4096 + 3 * 11008);
  // The sampler: 128 rows of the 32,000-entry vocabulary, the hidden states kept.
  const double sampler = 2048 * 2.0 * 4096 + 128 * 32000 * 38.0;
  REQUIRE(sampler > forward);
  CHECK(c.activation_reserve_bytes_per_gpu == Approx(1e8 + sampler));
  CHECK(c.usable_bytes_per_gpu == Approx(0.9 * hw.memory_visible_bytes));
  CHECK(hw.memory_visible_bytes < hw.memory_capacity_bytes);
  CHECK(c.kv_bytes_per_gpu == Approx(c.usable_bytes_per_gpu - c.weight_bytes_per_gpu -
                                     c.activation_reserve_bytes_per_gpu));
  // Fewer sampled rows: the forward sets the peak; more rows than tokens: one per token.
  o.max_sequences = 16;
  CHECK(plan_kv_capacity(m, hw, o).activation_reserve_bytes_per_gpu == Approx(1e8 + forward));
  o.max_sequences = 4096;
  CHECK(plan_kv_capacity(m, hw, o).activation_reserve_bytes_per_gpu ==
        Approx(1e8 + 2048 * 2.0 * 4096 + 2048 * 32000 * 38.0));
  // A GPU whose profile gives no visible total takes its capacity.
  const HardwareProfile a100 = shipped_hardware("a100-80gb");
  CHECK(plan_kv_capacity(m, a100, o).usable_bytes_per_gpu ==
        Approx(0.9 * a100.memory_capacity_bytes));
}

TEST_CASE("tensor parallelism and narrower KV formats raise the token capacity", "[memory]") {
  const ModelSpec m = shipped_model("llama-2-70b");
  const HardwareProfile hw = shipped_hardware("a100-80gb");
  KvCapacityOptions o;
  o.weight_dtype = DType::FP16;
  o.kv_dtype = DType::FP16;
  o.parallelism.tensor = 4;
  const KvCapacity tp4 = plan_kv_capacity(m, hw, o);
  o.parallelism.tensor = 8;
  const KvCapacity tp8 = plan_kv_capacity(m, hw, o);
  CHECK(tp8.kv_capacity_tokens > 2 * tp4.kv_capacity_tokens);
  CHECK(tp8.kv_capacity_bytes == Approx(8 * tp8.kv_bytes_per_gpu));
  o.kv_dtype = DType::FP8;
  const KvCapacity fp8 = plan_kv_capacity(m, hw, o);
  CHECK(fp8.kv_capacity_tokens == Approx(2 * tp8.kv_capacity_tokens).margin(1));
  o.memory_utilization = 0.5;
  CHECK(plan_kv_capacity(m, hw, o).kv_capacity_tokens < fp8.kv_capacity_tokens);
}

TEST_CASE("a model that does not fit is infeasible, with the figures", "[memory]") {
  const ModelSpec m = shipped_model("llama-3-70b");
  KvCapacityOptions o;
  REQUIRE_THROWS_AS(plan_kv_capacity(m, shipped_hardware("a100-40gb"), o), InfeasibleError);
  REQUIRE_THROWS_WITH(
      plan_kv_capacity(m, shipped_hardware("h100-sxm"), o),
      Catch::Contains("does not fit on H100-SXM at TP 1") && Catch::Contains("GiB of weights"));
  o.weight_dtype = DType::INT4;  // about 36 GB of weights: fits one H100 with room for KV
  REQUIRE(plan_kv_capacity(m, shipped_hardware("h100-sxm"), o).kv_capacity_tokens > 10000);
  o.memory_utilization = 1.5;
  REQUIRE_THROWS_AS(plan_kv_capacity(m, shipped_hardware("h100-sxm"), o), InputError);
}

TEST_CASE("token slots from vLLM's available KV memory match its reported KV cache size",
          "[memory][arch]") {
  // vLLM issue #21348 (vllm-project/vllm): Qwen3-235B-A22B-FP8 on 4 x H100, TP 4, bf16 KV:
  // "Available KV cache memory: 8.11 GiB", "GPU KV cache size: 178,880 tokens".
  const ModelSpec m = shipped_model("qwen3-235b-a22b");
  const Parallelism tp4{4, 1};
  // 94 layers x 1 KV head per GPU (4 over TP 4) x 128 x 2 x 2 B.
  const double slot = kv_bytes_per_token_per_gpu(m, tp4, DType::BF16);
  CHECK(slot == 94.0 * 128 * 2 * 2);
  const double tokens = 8.11 * 1073741824.0 / slot;
  CHECK(tokens == Approx(178880).epsilon(0.03));
}

TEST_CASE("token slots of V0's paged cache match its reported blocks", "[memory][arch]") {
  // vLLM issue #10517 (vllm-project/vllm), Llama-3.1-8B-Instruct on an RTX 3090, vLLM V0:
  // "kv_cache_size=3.81GiB ... # GPU blocks: 1952" (31,232 tokens of 16-token blocks), and at a
  // longer max_model_len "kv_cache_size=2.89GiB ... # GPU blocks: 1478" (23,648 tokens).
  const ModelSpec m = shipped_model("llama-3.1-8b");
  const double slot = kv_bytes_per_token(m, DType::BF16);
  CHECK(slot == 32.0 * 8 * 128 * 2 * 2);
  CHECK(3.81 * 1073741824.0 / slot == Approx(1952 * 16).epsilon(0.03));
  CHECK(2.89 * 1073741824.0 / slot == Approx(1478 * 16).epsilon(0.03));
}

TEST_CASE("token slots of a Qwen3 dense model match vLLM's reported KV cache size",
          "[memory][arch]") {
  // LMCache issue #1739 (LMCache/LMCache), Qwen3-14B on one GPU with vLLM V1:
  // "Available KV cache memory: 6.51 GiB", "GPU KV cache size: 42,656 tokens". Qwen3-14B
  // keeps Qwen3-8B's attention (8 KV heads of 128) over 40 layers instead of 36.
  ModelSpec m = shipped_model("qwen3-8b");
  m.num_layers = 40;
  m.layer_attention.clear();  // every layer full attention, as in Qwen3-8B
  const KvPoolLayout pools = kv_pool_layout(kv_groups(m, DType::BF16), 16);
  CHECK_FALSE(pools.per_group());
  const double available = 6.51 * 1073741824.0;
  CHECK(pools.reported_tokens(pools.blocks_in(available)) == Approx(42656).epsilon(0.03));
  CHECK(available / kv_bytes_per_token(m, DType::BF16) == Approx(42656).epsilon(0.03));
}

TEST_CASE("a hybrid model's KV is cut into vLLM's pools: gpt-oss, Qwen3-Next, Llama 4",
          "[memory][arch]") {
  const HardwareProfile hw = shipped_hardware("h200");
  KvCapacityOptions o;
  o.weight_dtype = DType::FP4;  // gpt-oss-120b as shipped: MXFP4 experts
  const ModelSpec oss = shipped_model("gpt-oss-120b");
  const KvCapacity c = plan_kv_capacity(oss, hw, o);
  // 18 full and 18 windowed layers: two groups of 18 layers, a page of 16 tokens x 2,048 B.
  REQUIRE(c.pools.groups.size() == 2);
  CHECK(c.pools.page_bytes == 16.0 * 2048);
  CHECK(c.pool_blocks == static_cast<std::int64_t>(c.kv_bytes_per_gpu / (16.0 * 2048) / 18));
  // vLLM's figure counts every layer as if it held every token.
  CHECK(c.kv_capacity_tokens == c.pool_blocks / 2 * 16);
  CHECK(c.kv_bytes_per_token_per_gpu == 36.0 * 2048);

  // DeepSeek-V3 on 8 x H200 in fp8: one MLA group, the latent replicated on every rank.
  KvCapacityOptions d;
  d.weight_dtype = DType::FP8;
  d.parallelism = {8, 1};
  const KvCapacity v3 = plan_kv_capacity(shipped_model("deepseek-v3"), hw, d);
  CHECK_FALSE(v3.pools.per_group());
  CHECK(v3.kv_bytes_per_token_per_gpu == 70272.0);
  CHECK(v3.kv_capacity_tokens == static_cast<std::int64_t>(v3.kv_bytes_per_gpu / 70272.0));

  // Qwen3-Next at TP 2: 12 full layers of 1 x 256 x 2 x 2 B a token and 36 recurrent layers of
  // (16 x 128 x 128 + 3 x 4,096) x 2 B of state. The attention block grows to 16 x
  // ceil(548,864 / 16,384) = 544 tokens so that a page holds a state; 12 layers a group: one
  // full and three recurrent groups.
  KvCapacityOptions q;
  q.parallelism = {2, 1};
  const KvCapacity next = plan_kv_capacity(shipped_model("qwen3-next-80b-a3b"), hw, q);
  CHECK(next.pools.block_tokens == 544);
  CHECK(next.pools.page_bytes == 544.0 * 1024);
  CHECK(next.pools.layers_per_group == 12);
  CHECK(next.pools.groups.size() == 4);
  CHECK(next.kv_capacity_tokens == next.pool_blocks / 4 * 544);

  // Llama 4 Scout at TP 8: 36 chunked and 12 full layers, one KV head of 128 a GPU.
  o.parallelism = {8, 1};
  o.weight_dtype = DType::BF16;
  const KvCapacity scout = plan_kv_capacity(shipped_model("llama-4-scout"), hw, o);
  CHECK(scout.pools.groups.size() == 4);
  CHECK(scout.pool_blocks == static_cast<std::int64_t>(scout.kv_bytes_per_gpu / (16.0 * 512) / 12));
  CHECK(scout.kv_capacity_tokens == scout.pool_blocks / 4 * 16);
}
