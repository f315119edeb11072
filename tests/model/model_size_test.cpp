#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/model/model_size.h"
#include "tests/support/test_support.h"

using namespace servesim;
using servesim::test::shipped_model;

TEST_CASE("KV bytes per token follow 2 x layers x d_model x bytes / kv_group", "[model]") {
  RawModelDims dims;
  dims.num_layers = 32;
  dims.hidden_size = 4096;
  const ModelSpec mha = model_from_raw_dims(dims);
  REQUIRE(kv_bytes_per_token(mha, DType::FP16) == 524288.0);
  REQUIRE(kv_bytes_per_token(mha, DType::FP16) * 8192 == 4294967296.0);
  dims.kv_group = 8;
  const ModelSpec gqa = model_from_raw_dims(dims);
  REQUIRE(kv_bytes_per_token(gqa, DType::FP16) * 8192 == 536870912.0);
  REQUIRE(kv_bytes_per_token(gqa, DType::FP8) * 8192 == 268435456.0);
  REQUIRE(kv_bytes_per_token(gqa, DType::INT4) * 8192 == 134217728.0);
}

TEST_CASE("KV bytes per token of shipped models", "[model]") {
  REQUIRE(kv_bytes_per_token(shipped_model("opt-13b"), DType::FP16) == 819200.0);
  // Llama-3-8B: 32 layers x 8 KV heads x 128 x 2 x 2 B = 128 KiB.
  REQUIRE(kv_bytes_per_token(shipped_model("llama-3-8b"), DType::BF16) == 131072.0);
  // Llama-2-70B: 80 x 8 x 128 x 2 x 2 = 320 KiB.
  REQUIRE(kv_bytes_per_token(shipped_model("llama-2-70b"), DType::BF16) == 327680.0);
  // Qwen2.5-7B: 28 x 4 x 128 x 2 x 2 = 56 KiB.
  REQUIRE(kv_bytes_per_token(shipped_model("qwen2.5-7b"), DType::BF16) == 57344.0);
}

TEST_CASE("parameter counts match the published totals exactly", "[model]") {
  // Totals as reported by Hugging Face (sum of tensor sizes in the checkpoints).
  CHECK(count_parameters(shipped_model("llama-2-7b")).total == 6738415616);
  CHECK(count_parameters(shipped_model("llama-3-8b")).total == 8030261248);
  CHECK(count_parameters(shipped_model("llama-3-70b")).total == 70553706496);
  CHECK(count_parameters(shipped_model("qwen2.5-7b")).total == 7615616512);
  CHECK(count_parameters(shipped_model("mistral-7b")).total == 7241732096);
  const ParameterCounts mixtral = count_parameters(shipped_model("mixtral-8x7b"));
  CHECK(mixtral.total == 46702792704);
  CHECK(mixtral.active == 12879925248);
  const ParameterCounts llama = count_parameters(shipped_model("llama-2-7b"));
  CHECK(llama.active == llama.total);
  // Everything but embeddings, norms and the LM head is in the layer matrices.
  CHECK(llama.linear_total == 32LL * (4LL * 4096 * 4096 + 3 * 4096 * 11008));
}

TEST_CASE("OPT counts biases, learned positions and tied embeddings", "[model]") {
  const ModelSpec opt = shipped_model("opt-13b");
  const std::int64_t h = 5120, f = 20480, layers = 40;
  const std::int64_t per_layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 2 * 2 * h;
  const std::int64_t expected = layers * per_layer + 50272 * h + 2050 * h + 2 * h;
  REQUIRE(count_parameters(opt).total == expected);
}

TEST_CASE("weight bytes scale with the weight format, and quantization spares embeddings",
          "[model]") {
  const ModelSpec m = shipped_model("llama-2-7b");
  const ParameterCounts c = count_parameters(m);
  const double other = static_cast<double>(c.total - c.linear_total);
  REQUIRE(weight_bytes(m, DType::BF16) == 2.0 * static_cast<double>(c.total));
  REQUIRE(weight_bytes(m, DType::FP32) == 4.0 * static_cast<double>(c.total));
  REQUIRE(weight_bytes(m, DType::INT8) == static_cast<double>(c.linear_total) + 2 * other);
  REQUIRE(weight_bytes(m, DType::INT4) == 0.5 * static_cast<double>(c.linear_total) + 2 * other);
}

TEST_CASE("tensor parallelism splits weights and KV, and KV heads replicate past their count",
          "[model]") {
  const ModelSpec m = shipped_model("llama-3-70b");
  const double whole = weight_bytes(m, DType::BF16);
  const double tp8 = weight_bytes_per_gpu(m, Parallelism{8, 1}, DType::BF16);
  // Only norms are replicated, so eight shards hold a little more than the whole model.
  REQUIRE(tp8 * 8 > whole);
  REQUIRE(tp8 * 8 < whole * 1.001);
  REQUIRE(kv_bytes_per_token_per_gpu(m, Parallelism{8, 1}, DType::BF16) ==
          kv_bytes_per_token(m, DType::BF16) / 8);
  // TP 16 over 8 KV heads: each GPU still stores one whole KV head.
  REQUIRE(kv_bytes_per_token_per_gpu(m, Parallelism{16, 1}, DType::BF16) ==
          kv_bytes_per_token(m, DType::BF16) / 8);
  // Pipeline stages split the layers.
  REQUIRE(kv_bytes_per_token_per_gpu(m, Parallelism{1, 4}, DType::BF16) ==
          kv_bytes_per_token(m, DType::BF16) / 4);
  // The first stage holds a quarter of the layers plus the embeddings (1.05 B parameters).
  const double embeddings = 2.0 * 128256 * 8192;
  REQUIRE(weight_bytes_per_gpu(m, Parallelism{1, 4}, DType::BF16) ==
          Approx((whole - 2 * embeddings) / 4 + embeddings).epsilon(0.001));
}

TEST_CASE("impossible parallel degrees are refused naming the flag", "[model]") {
  const ModelSpec m = shipped_model("llama-2-7b");  // 32 heads, 32 KV heads, 32 layers
  REQUIRE_THROWS_WITH(shard_model(m, Parallelism{3, 1}),
                      Catch::Contains("--tp") && Catch::Contains("does not divide the 32"));
  REQUIRE_THROWS_WITH(shard_model(m, Parallelism{1, 33}), Catch::Contains("--pp"));
  REQUIRE_THROWS_AS(shard_model(m, Parallelism{0, 1}), InputError);
  const ModelSpec qwen = shipped_model("qwen2.5-7b");  // 28 heads, 4 KV heads
  REQUIRE_NOTHROW(shard_model(qwen, Parallelism{4, 1}));
  REQUIRE_THROWS_WITH(shard_model(qwen, Parallelism{7, 1}),
                      Catch::Contains("KV heads") && Catch::Contains("do not divide"));
}

TEST_CASE("raw dimensions check heads, KV heads and the KV group", "[model]") {
  RawModelDims dims;
  dims.num_layers = 32;
  dims.hidden_size = 4096;
  dims.num_heads = 30;
  REQUIRE_THROWS_WITH(model_from_raw_dims(dims), Catch::Contains("do not divide d_model"));
  dims.num_heads = 32;
  dims.num_kv_heads = 8;
  dims.kv_group = 2;
  REQUIRE_THROWS_WITH(model_from_raw_dims(dims), Catch::Contains("conflicts"));
  dims.kv_group = 4;
  REQUIRE(model_from_raw_dims(dims).kv_group() == 4);
  dims = RawModelDims{};
  dims.num_layers = 0;
  dims.hidden_size = 4096;
  REQUIRE_THROWS_WITH(model_from_raw_dims(dims), Catch::Contains("--layers"));
}
