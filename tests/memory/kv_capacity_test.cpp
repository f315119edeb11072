#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/memory/kv_capacity.h"
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

TEST_CASE("windows and recurrent states are reserved per sequence before slots are counted",
          "[memory][arch]") {
  const HardwareProfile hw = shipped_hardware("h200");
  KvCapacityOptions o;
  o.weight_dtype = DType::FP4;  // gpt-oss-120b as shipped: MXFP4 experts
  const ModelSpec oss = shipped_model("gpt-oss-120b");
  const KvCapacity c = plan_kv_capacity(oss, hw, o);
  // 18 full layers grow; 18 windowed layers hold 128 tokens for each of 256 sequences.
  CHECK(c.kv_bytes_per_token_per_gpu == 18.0 * 2048);
  CHECK(c.kv_reserved_bytes_per_sequence_per_gpu == 18.0 * 2048 * 128);
  CHECK(c.kv_reserved_bytes_per_gpu == 256.0 * 18 * 2048 * 128);
  CHECK(c.kv_capacity_tokens ==
        static_cast<std::int64_t>((c.kv_bytes_per_gpu - c.kv_reserved_bytes_per_gpu) /
                                  (18.0 * 2048)));
  // Sequences of 131,072 tokens that fit: each holds 18 x 2,048 x (131,072 + 128) B.
  CHECK(sequences_that_fit(c.groups_per_gpu, c.kv_bytes_per_gpu, 131072) ==
        static_cast<std::int64_t>(c.kv_bytes_per_gpu / (18.0 * 2048 * (131072 + 128))));

  // DeepSeek-V3 on 8 x H200 in fp8: the MLA latent is replicated on every rank.
  KvCapacityOptions d;
  d.weight_dtype = DType::FP8;
  d.parallelism = {8, 1};
  const KvCapacity v3 = plan_kv_capacity(shipped_model("deepseek-v3"), hw, d);
  CHECK(v3.kv_bytes_per_token_per_gpu == 70272.0);
  CHECK(v3.kv_reserved_bytes_per_gpu == 0);
  CHECK(v3.kv_capacity_tokens == static_cast<std::int64_t>(v3.kv_bytes_per_gpu / 70272.0));

  // Qwen3-Next: 36 recurrent layers' state per sequence, reserved for 256 sequences.
  KvCapacityOptions q;
  q.parallelism = {2, 1};
  const KvCapacity next = plan_kv_capacity(shipped_model("qwen3-next-80b-a3b"), hw, q);
  const double state = 36.0 * (16 * 128 * 128 + 3 * 4096) * 2;  // TP 2 halves the heads
  CHECK(next.kv_reserved_bytes_per_sequence_per_gpu == state);
  CHECK(next.kv_bytes_per_token_per_gpu == 12.0 * 1 * 256 * 2 * 2);
}

TEST_CASE("a long window over many sequences is priced into the slots instead", "[memory][arch]") {
  const HardwareProfile hw = shipped_hardware("h200");
  KvCapacityOptions o;
  o.parallelism = {8, 1};
  o.max_sequences = 1024;
  const ModelSpec scout = shipped_model("llama-4-scout");
  const KvCapacity c = plan_kv_capacity(scout, hw, o);
  // Reserving 36 chunked layers x 8,192 tokens x 512 B for 1,024 sequences (144 GiB) would
  // not fit: every layer is priced per token instead (48 layers x 1 KV head x 128 x 2 x 2 B).
  CHECK(c.kv_reserved_bytes_per_gpu == 0);
  CHECK(c.kv_bytes_per_token_per_gpu == 48.0 * 512);
  CHECK(c.kv_capacity_tokens == static_cast<std::int64_t>(c.kv_bytes_per_gpu / (48.0 * 512)));
}
