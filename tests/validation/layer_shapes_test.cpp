#include <catch2/catch.hpp>

#include <vector>

#include "sim/core/error.h"
#include "tests/support/test_support.h"
#include "validation/layer_shapes.h"

namespace sv = servesim::validation;
using servesim::test::source_dir;

namespace {

void check_gemm(const sv::GemmShape& g, const char* op, std::int64_t m, std::int64_t n,
                std::int64_t k) {
  INFO(op);
  CHECK(g.op == op);
  CHECK(g.m == m);
  CHECK(g.n == n);
  CHECK(g.k == k);
}

}  // namespace

TEST_CASE("layer GEMMs of llama-3-8b follow its dimensions and TP degree", "[validation][shapes]") {
  const sv::ModelShard tp1 = sv::load_model_shard(source_dir(), "llama-3-8b", 1, 1);
  const auto gemms = sv::layer_gemms(tp1, 16, sv::ElementType::BF16);
  REQUIRE(gemms.size() == 4);
  check_gemm(gemms[0], "qkv", 16, 4096 + 2 * 8 * 128, 4096);
  check_gemm(gemms[1], "o", 16, 4096, 4096);
  check_gemm(gemms[2], "mlp_up", 16, 2 * 14336, 4096);  // gate and up fused
  check_gemm(gemms[3], "mlp_down", 16, 4096, 14336);
  check_gemm(sv::lm_head_gemm(tp1, 3, sv::ElementType::BF16), "lm_head", 3, 128256, 4096);

  const sv::ModelShard tp2 = sv::load_model_shard(source_dir(), "llama-3-8b", 2, 1);
  const auto halves = sv::layer_gemms(tp2, 1, sv::ElementType::FP16);
  check_gemm(halves[0], "qkv", 1, 2048 + 2 * 4 * 128, 4096);
  check_gemm(halves[1], "o", 1, 4096, 2048);
  check_gemm(halves[2], "mlp_up", 1, 14336, 4096);
  check_gemm(halves[3], "mlp_down", 1, 4096, 7168);
  CHECK(halves[0].dtype == sv::ElementType::FP16);
  CHECK(sv::lm_head_gemm(tp2, 1, sv::ElementType::FP16).n == 64128);
  const sv::HeadShape heads = sv::head_shape(tp2);
  CHECK(heads.num_heads == 16);
  CHECK(heads.num_kv_heads == 4);
  CHECK(heads.head_dim == 128);
  CHECK(tp2.shard.layers == 32);
}

TEST_CASE("plain-MLP and mixture-of-experts models get their own MLP shapes",
          "[validation][shapes]") {
  const sv::ModelShard opt = sv::load_model_shard(source_dir(), "opt-13b", 1, 1);
  const auto gemms = sv::layer_gemms(opt, 8, sv::ElementType::FP16);
  check_gemm(gemms[2], "mlp_up", 8, 20480, 5120);  // one fc1 matrix, no gate
  check_gemm(gemms[3], "mlp_down", 8, 5120, 20480);

  const sv::ModelShard mixtral = sv::load_model_shard(source_dir(), "mixtral-8x7b", 1, 1);
  // One token routed to 2 of 8 experts: two experts with one token each.
  CHECK(sv::split_over_experts(mixtral, 1).active_experts == 2);
  CHECK(sv::split_over_experts(mixtral, 1).tokens_per_expert == 1);
  // 100 tokens x 2 routes over all 8 experts: 25 each.
  CHECK(sv::split_over_experts(mixtral, 100).active_experts == 8);
  CHECK(sv::split_over_experts(mixtral, 100).tokens_per_expert == 25);
  check_gemm(sv::layer_gemms(mixtral, 100, sv::ElementType::BF16)[2], "mlp_up", 25, 2 * 14336,
             4096);
  CHECK(sv::split_over_experts(opt, 100).active_experts == 1);
  CHECK(sv::split_over_experts(opt, 100).tokens_per_expert == 100);
}

TEST_CASE("bad model names and TP degrees name the flag", "[validation][shapes]") {
  CHECK_THROWS_WITH(sv::load_model_shard(source_dir(), "llama-3-8b", 3, 1),
                    Catch::Contains("--tp"));
  CHECK_THROWS_WITH(sv::load_model_shard(source_dir(), "llama-3-8b", 1, 64),
                    Catch::Contains("--pp"));
  CHECK_THROWS_WITH(sv::load_model_shard(source_dir(), "no-such-model", 1, 1),
                    Catch::Contains("--model") && Catch::Contains("llama-3-8b"));
  const sv::ModelShard pp2 = sv::load_model_shard(source_dir(), "llama-2-7b", 1, 2);
  CHECK(pp2.shard.layers == 16);
}
