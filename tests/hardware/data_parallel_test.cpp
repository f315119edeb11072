#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/core/error.h"
#include "sim/hardware/data_parallel.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/memory/kv_capacity.h"
#include "sim/model/model_size.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::shipped_hardware;
using test::shipped_model;

namespace {

// DeepSeek-V3 in its fp8 checkpoint on one H200 node: TP 8 with EP 8, or 8 DP attention ranks
// of one GPU each with EP 8.
RooflineOptions deepseek(std::int64_t tp, std::int64_t dp) {
  RooflineOptions o;
  o.weight_dtype = DType::FP8;
  o.parallelism = Parallelism{tp, 1, true, dp};
  return o;
}

BatchShape decodes(std::int64_t sequences, std::int64_t context) {
  BatchShape shape;
  shape.add_decodes(sequences, sequences * context);
  return shape;
}

}  // namespace

TEST_CASE("the busiest DP rank holds ceil(n / D) sequences of each kind and their share",
          "[hardware][dp]") {
  BatchShape replica;
  for (int i = 0; i < 3; ++i)
    replica.add_prefill(300, 100);
  replica.add_decodes(17, 17 * 1000);
  const BatchShape r = busiest_attention_rank(replica, 8);
  CHECK(r.prefill_sequences == 1);
  CHECK(r.prefill_tokens == 300);
  CHECK(r.prefill_context_tokens == 400);
  CHECK(r.prefill_attention_pairs == Approx(replica.prefill_attention_pairs / 3));
  CHECK(r.decode_sequences == 3);          // ceil(17 / 8)
  CHECK(r.decode_context_tokens == 3000);  // 17,000 x 3 / 17
  CHECK(r.sampled_sequences == 3 + 1);     // its decodes and its completed prompt
  CHECK(busiest_attention_rank(replica, 1).prefill_tokens == replica.prefill_tokens);
  // A decode batch's contexts grow by the rank's sequences a step, exactly.
  BatchShape later = replica;
  later.prefill_sequences = 0;
  later.prefill_tokens = 0;
  later.decode_context_tokens += 5 * 17;
  CHECK(busiest_attention_rank(later, 8).decode_context_tokens == 3000 + 5 * 3);
}

TEST_CASE("DeepSeek-V3 decode under DP attention 8 reads an eighth of TP 8's latents per GPU",
          "[hardware][dp]") {
  const ModelSpec model = shipped_model("deepseek-v3");
  const HardwareProfile h200 = shipped_hardware("h200");
  const RooflineModel tp8(model, h200, deepseek(8, 1));
  const RooflineModel dp8(model, h200, deepseek(1, 8));
  const std::int64_t sequences = 256, context = 2000;
  const IterationCost t = tp8.estimate(decodes(sequences, context));
  const IterationCost d = dp8.estimate(decodes(sequences, context));

  // Absorbed MLA: per key 2 H (r + p) + 2 H r FLOPs, (r + p) = 576 values of 2 B (bf16 KV).
  const double a = 2, b = 2, latent = 576;
  const auto per_gpu = [&](double heads, double seqs) {
    const double q = heads * (2 * 512 + 64) / 2;  // the query width the kernel sees
    const double keys = seqs * context;
    return std::make_pair(61 * 4 * q * keys,
                          61 * (keys * latent * b + seqs * (2 * q * a + latent * b)));
  };
  // TP 8: 16 heads a GPU over all 256 sequences, every latent on every GPU.
  const auto [tp_flops, tp_bytes] = per_gpu(16, 256);
  // DP 8: all 128 heads a GPU over its 32 sequences and only their latents.
  const auto [dp_flops, dp_bytes] = per_gpu(128, 32);
  CHECK(t.at(OperatorKind::AttentionDecode).flops == Approx(tp_flops).epsilon(1e-12));
  CHECK(t.at(OperatorKind::AttentionDecode).bytes == Approx(tp_bytes).epsilon(1e-12));
  CHECK(d.at(OperatorKind::AttentionDecode).flops == Approx(dp_flops).epsilon(1e-12));
  CHECK(d.at(OperatorKind::AttentionDecode).bytes == Approx(dp_bytes).epsilon(1e-12));
  // The same FLOPs per GPU, an eighth of the cache reads.
  CHECK(dp_flops == Approx(tp_flops));
  CHECK(61 * 32 * context * latent * b * 8 == Approx(61 * 256 * context * latent * b));

  // The routed experts see all 256 tokens over the EP 8 group either way, and the shared
  // expert the rank's 32 tokens whole against the 256 tokens sliced by 8: the same MLP work.
  CHECK(d.at(OperatorKind::MlpDown).flops == Approx(t.at(OperatorKind::MlpDown).flops));
  CHECK(d.at(OperatorKind::ExpertAllToAll).bytes ==
        Approx(t.at(OperatorKind::ExpertAllToAll).bytes));
  // The projections: a rank's 32 tokens over whole heads against 256 tokens over 16 heads.
  CHECK(d.at(OperatorKind::OutProj).flops == Approx(t.at(OperatorKind::OutProj).flops));
  // No TP group inside a rank of one GPU: no all-reduce.
  CHECK_FALSE(d.at(OperatorKind::TpAllReduce).present());
  CHECK(t.at(OperatorKind::TpAllReduce).present());
}

TEST_CASE("a DP attention decode run is priced exactly as its iterations one by one",
          "[hardware][dp]") {
  const RooflineModel dp8(shipped_model("deepseek-v3"), shipped_hardware("h200"), deepseek(1, 8));
  BatchShape first = decodes(37, 1500);
  first.decode_context_tokens += 11;  // contexts that do not split evenly
  std::vector<double> run(40);
  dp8.estimate_decode_run(first, run);
  BatchShape shape = first;
  for (double duration_s : run) {
    REQUIRE(duration_s == dp8.estimate(shape).total_time_s);
    shape.decode_context_tokens += shape.decode_sequences;
  }
}

TEST_CASE("DP attention holds KV per rank: DeepSeek-V3 keeps 8 ranks of latents, not copies",
          "[hardware][dp]") {
  const ModelSpec model = shipped_model("deepseek-v3");
  const HardwareProfile h200 = shipped_hardware("h200");
  KvCapacityOptions o;
  o.weight_dtype = DType::FP8;
  o.parallelism = Parallelism{8, 1, true, 1};
  const KvCapacity tp8 = plan_kv_capacity(model, h200, o);
  o.parallelism = Parallelism{1, 1, true, 8};
  const KvCapacity dp8 = plan_kv_capacity(model, h200, o);
  // One latent per token and layer on every GPU either way: 61 x 576 x 2 B.
  CHECK(tp8.kv_bytes_per_token_per_gpu == 70272);
  CHECK(dp8.kv_bytes_per_token_per_gpu == 70272);
  // TP 8 replicates every token on the 8 GPUs; DP 8 holds 8 ranks' tokens.
  CHECK(tp8.kv_capacity_tokens ==
        static_cast<std::int64_t>(std::floor(tp8.kv_bytes_per_gpu / 70272)));
  CHECK(dp8.kv_capacity_tokens ==
        8 * static_cast<std::int64_t>(std::floor(dp8.kv_bytes_per_gpu / 70272)));
  // A DP rank's GPU holds its attention, dense layers, shared experts and embeddings whole
  // and 32 of the 256 routed experts: TP 1's weights less 7/8 of the routed ones (58 MoE
  // layers of 256 experts of 3 x 7,168 x 2,048).
  const double routed = 58.0 * 256 * 3 * 7168 * 2048 * linear_bytes(model, DType::FP8).mlp;
  const double tp1 = weight_bytes_per_gpu(model, Parallelism{1, 1}, DType::FP8);
  CHECK(dp8.weight_bytes_per_gpu == Approx(tp1 - routed * 7 / 8).epsilon(1e-12));
  // The replica's KV bytes are its 8 GPUs'.
  CHECK(dp8.kv_capacity_bytes == Approx(8 * dp8.kv_bytes_per_gpu));
  // With the attention weights whole on every GPU each holds less KV than under TP 8, and
  // the replica still holds several times the tokens.
  CHECK(dp8.kv_bytes_per_gpu < tp8.kv_bytes_per_gpu);
  CHECK(dp8.kv_capacity_tokens > 4 * tp8.kv_capacity_tokens);
}

TEST_CASE("DP attention is refused for a dense model, without EP and with PP", "[hardware][dp]") {
  const auto refused = [](const std::string& name, Parallelism p, const std::string& needle) {
    try {
      shard_model(shipped_model(name), p);
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("data_parallel") && Catch::Contains(needle));
    }
  };
  refused("llama-3-8b", Parallelism{1, 1, false, 2}, "dense model");
  refused("deepseek-v3", Parallelism{8, 1, false, 2}, "needs expert_parallel");
  refused("deepseek-v3", Parallelism{8, 2, true, 2}, "pp 2");
  refused("deepseek-v3", Parallelism{8, 1, true, 0}, "positive");
  // EP 8 x 3 = 24 does not divide 256 experts.
  CHECK_THROWS_AS(shard_model(shipped_model("deepseek-v3"), Parallelism{8, 1, true, 3}),
                  InputError);
}
