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
