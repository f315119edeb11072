#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/hardware/generation_cost.h"
#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::decode_batch;
using test::prefill_batch;
using test::shipped_hardware;
using test::shipped_model;

namespace {

const char* const kShipped[] = {"a100-40gb", "a100-80gb", "h100-sxm", "h200",
                                "l40s",      "b200",      "mi300x"};

}  // namespace

TEST_CASE("prefill is compute-bound and small-batch decode memory-bound on every GPU",
          "[roofline]") {
  for (const char* model_name : {"llama-3-8b", "llama-2-7b", "mixtral-8x7b"}) {
    const ModelSpec model = shipped_model(model_name);
    for (const char* hw : kShipped) {
      INFO(model_name << " on " << hw);
      const RooflineModel roofline(model, shipped_hardware(hw), RooflineOptions{});
      const IterationCost p = roofline.estimate(prefill_batch(2048));
      CHECK(p.dominant_bound() == Bound::Compute);
      CHECK(p.at(OperatorKind::MlpUp).bound == Bound::Compute);
      const IterationCost d = roofline.estimate(decode_batch(1, 1024));
      CHECK(d.dominant_bound() == Bound::Memory);
      const OperatorCost& qkv = d.at(OperatorKind::QkvProj);
      if (std::string(hw) == "h200") {
        // h200 takes h100-sxm's kernel ceilings (the same die): their small-GEMM tile cost
        // puts a GQA model's narrow batch-1 QKV GEMV at the knee on the faster memory
        // (compute 2% past the weight streaming), so 5% past the balance point is allowed.
        CHECK(qkv.intensity_flops_per_byte() <= 1.05 * qkv.balance_flops_per_byte);
      } else {
        CHECK(qkv.bound == Bound::Memory);
      }
      CHECK(d.at(OperatorKind::AttentionDecode).bound == Bound::Memory);
    }
  }
}

TEST_CASE("operator FLOPs and bytes follow the layer shapes", "[roofline]") {
  const ModelSpec m = shipped_model("llama-3-8b");  // 32 x (4096, 32 heads, 8 KV, 14336)
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  const RooflineModel roofline(m, hw, RooflineOptions{});
  const double l = 32, h = 4096, qkv = (32 + 2 * 8) * 128, i = 14336;
  const IterationCost c = roofline.estimate(decode_batch(4, 1000));
  CHECK(c.at(OperatorKind::QkvProj).flops == Approx(l * 2 * 4 * h * qkv));
  CHECK(c.at(OperatorKind::QkvProj).bytes == Approx(l * (h * qkv * 2 + 4 * (h + qkv) * 2)));
  CHECK(c.at(OperatorKind::MlpUp).flops == Approx(l * 2 * 4 * h * 2 * i));
  CHECK(c.at(OperatorKind::MlpDown).flops == Approx(l * 2 * 4 * i * h));
  // Decode attention: 4 FLOPs per head dimension per cached token; reads every K and V.
  CHECK(c.at(OperatorKind::AttentionDecode).flops == Approx(l * 4 * 4096 * 4000));
  CHECK(c.at(OperatorKind::AttentionDecode).bytes >= l * 4000 * 2 * 1024 * 2);
  CHECK(c.at(OperatorKind::LmHead).flops == Approx(2 * 4 * h * 128256));
  CHECK_FALSE(c.at(OperatorKind::TpAllReduce).present());
  CHECK_FALSE(c.at(OperatorKind::AttentionPrefill).present());

  // A memory-bound operator takes bytes over achieved bandwidth plus a fixed cost per layer.
  const auto& qkv_op = c.at(OperatorKind::QkvProj);
  // Ceilings of the GEMM class at 4 tokens.
  REQUIRE(qkv_op.bound == Bound::Memory);
  const KernelCeilings& qkv_class = hw.kernels.gemm_for(GemmOperator::Qkv);
  const double expected =
      qkv_class.memory_s(qkv_op.bytes / hw.memory_bandwidth_bytes_per_s, 4) + l * qkv_class.fixed_s;
  CHECK(qkv_op.time_s == Approx(expected));
  // The bare roofline has no host work: that is the engine's.
  CHECK(c.at(OperatorKind::Overhead).time_s == 0);
  double sum = 0;
  for (const auto& op : c.operators)
    sum += op.time_s;
  CHECK(c.total_time_s == Approx(sum));
}

TEST_CASE("causal prefill attention counts query-key pairs", "[roofline]") {
  BatchShape whole;
  whole.add_prefill(1000, 0);
  CHECK(whole.prefill_attention_pairs == 1000.0 * 1001 / 2);
  // Two chunks of 500 see the same pairs as one prompt of 1000.
  BatchShape first, second;
  first.add_prefill(500, 0, false);
  second.add_prefill(500, 500);
  CHECK(first.prefill_attention_pairs + second.prefill_attention_pairs ==
        whole.prefill_attention_pairs);
  CHECK(first.sampled_sequences == 0);
  CHECK(second.sampled_sequences == 1);
}

TEST_CASE("time grows with work and falls with faster hardware", "[roofline]") {
  const ModelSpec m = shipped_model("llama-2-7b");
  const RooflineModel a100(m, shipped_hardware("a100-80gb"), RooflineOptions{});
  const RooflineModel h100(m, shipped_hardware("h100-sxm"), RooflineOptions{});
  CHECK(a100.estimate(decode_batch(64, 512)).total_time_s >
        a100.estimate(decode_batch(8, 512)).total_time_s);
  CHECK(a100.estimate(decode_batch(8, 2048)).total_time_s >
        a100.estimate(decode_batch(8, 512)).total_time_s);
  CHECK(h100.estimate(prefill_batch(4096)).total_time_s <
        a100.estimate(prefill_batch(4096)).total_time_s);
  CHECK(a100.estimate(BatchShape{}).total_time_s == 0);
  // Decode at batch 1 streams the weights: time is at least weights / peak bandwidth.
  CHECK(a100.estimate(decode_batch(1, 16)).total_time_s > 13.4e9 / 2.039e12);
}

TEST_CASE("tensor parallelism shards the GEMMs and adds all-reduces", "[roofline]") {
  const ModelSpec m = shipped_model("llama-2-70b");
  const HardwareProfile hw = shipped_hardware("a100-80gb");
  const RooflineModel tp1(m, hw, RooflineOptions{});
  RooflineOptions o4;
  o4.parallelism.tensor = 4;
  const RooflineModel tp4(m, hw, o4);
  const BatchShape shape = decode_batch(16, 1024);
  const IterationCost c1 = tp1.estimate(shape);
  const IterationCost c4 = tp4.estimate(shape);
  CHECK(c4.at(OperatorKind::MlpUp).flops == Approx(c1.at(OperatorKind::MlpUp).flops / 4));
  CHECK(c4.at(OperatorKind::QkvProj).flops == Approx(c1.at(OperatorKind::QkvProj).flops / 4));
  const auto& allreduce = c4.at(OperatorKind::TpAllReduce);
  REQUIRE(allreduce.present());
  CHECK(allreduce.bound == Bound::Network);
  // Two ring all-reduces per layer of the hidden state: 2 (n - 1) / n of the message moves.
  CHECK(allreduce.bytes == Approx(2 * 80 * 1.5 * 16 * 8192 * 2));
  CHECK(allreduce.time_s >= 2 * 80 * hw.overheads.collective_latency_s);
  CHECK(c4.total_time_s < c1.total_time_s);
}

TEST_CASE("mixture-of-experts streams only the experts its tokens touch", "[roofline]") {
  const ModelSpec m = shipped_model("mixtral-8x7b");
  const RooflineModel roofline(m, shipped_hardware("h100-sxm"), RooflineOptions{});
  const double expert_bytes = 32.0 * 4096 * 2 * 14336 * 2;  // up and gate of one expert
  const IterationCost one = roofline.estimate(decode_batch(1, 128));
  // One token reads its 2 experts.
  CHECK(one.at(OperatorKind::MlpUp).bytes == Approx(2 * expert_bytes).epsilon(0.01));
  // A large batch touches all 8.
  const IterationCost many = roofline.estimate(decode_batch(256, 128));
  CHECK(many.at(OperatorKind::MlpUp).bytes > 8 * expert_bytes);
  CHECK(many.at(OperatorKind::MlpUp).flops ==
        Approx(256 * 2 * 32.0 * 2 * 4096 * 2 * 14336 + 32.0 * 2 * 256 * 4096 * 8));
}

TEST_CASE("fp8 weights use fp8 tensor cores only where the device has them", "[roofline]") {
  const ModelSpec m = shipped_model("llama-3-8b");
  RooflineOptions fp8;
  fp8.weight_dtype = DType::FP8;
  const RooflineModel h100(m, shipped_hardware("h100-sxm"), fp8);
  const RooflineModel a100(m, shipped_hardware("a100-80gb"), fp8);
  CHECK(h100.compute_dtype() == DType::FP8);
  CHECK(a100.compute_dtype() == DType::BF16);
  const RooflineModel h100_bf16(m, shipped_hardware("h100-sxm"), RooflineOptions{});
  // Half the weight bytes: decode at batch 1 gets faster; prefill doubles its ceiling.
  CHECK(h100.estimate(decode_batch(1, 128)).at(OperatorKind::MlpUp).bytes <
        0.51 * h100_bf16.estimate(decode_batch(1, 128)).at(OperatorKind::MlpUp).bytes);
  CHECK(h100.estimate(prefill_batch(4096)).at(OperatorKind::MlpUp).time_s <
        0.6 * h100_bf16.estimate(prefill_batch(4096)).at(OperatorKind::MlpUp).time_s);
}

TEST_CASE("without a KV cache, generation work grows quadratically", "[roofline]") {
  const ModelSpec m = shipped_model("llama-2-7b");
  const RooflineModel roofline(m, shipped_hardware("a100-80gb"), RooflineOptions{});
  const GenerationComparison g1 = compare_generation(roofline, 1, 500);
  const GenerationComparison g2 = compare_generation(roofline, 1, 1000);
  // With a cache: linear in the tokens (attention adds a small quadratic term).
  CHECK(g2.with_cache.flops / g1.with_cache.flops == Approx(2).epsilon(0.05));
  // Without: the sum 1 + 2 + ... + M quadruples when M doubles (attention adds a cubic term).
  CHECK(g2.without_cache.flops / g1.without_cache.flops > 3.9);
  CHECK(g2.without_cache.flops / g1.without_cache.flops < 4.5);
  CHECK(g2.without_cache.time_s > g2.with_cache.time_s);
  // The first token costs the same either way: one forward pass over the prompt.
  const GenerationComparison single = compare_generation(roofline, 64, 1);
  CHECK(single.with_cache.flops == single.without_cache.flops);
}

TEST_CASE("calibrated ceilings price GEMMs by size and attention by its masked work",
          "[roofline]") {
  const ModelSpec m = shipped_model("llama-2-7b");
  HardwareProfile flat = shipped_hardware("a100-80gb");
  flat.kernels.gemm = {0.7, 0, 0.8, 0, 0};
  flat.kernels.gemm_operators = {};  // every GEMM operator uses "gemm"
  flat.kernels.prefill_attention = {0.5, 0, 0.8, 0, 0, 0};
  HardwareProfile curved = flat;
  curved.kernels.gemm.compute_half_size = 100;
  curved.kernels.prefill_attention.masked_pair_weight = 1;
  const RooflineModel a(m, flat, RooflineOptions{});
  const RooflineModel b(m, curved, RooflineOptions{});
  // At 2,000 tokens the MLP is compute-bound: efficiency 0.7 x 2000 / 2100.
  const auto up_flat = a.estimate(prefill_batch(2000)).at(OperatorKind::MlpUp);
  const auto up_curved = b.estimate(prefill_batch(2000)).at(OperatorKind::MlpUp);
  REQUIRE(up_flat.bound == Bound::Compute);
  CHECK(up_curved.time_s == Approx(up_flat.time_s * 2100 / 2000));
  CHECK(up_curved.flops == up_flat.flops);
  // A kernel that computes the masked half of the causal square does about twice the work.
  const auto att_flat = a.estimate(prefill_batch(2000)).at(OperatorKind::AttentionPrefill);
  const auto att_curved = b.estimate(prefill_batch(2000)).at(OperatorKind::AttentionPrefill);
  REQUIRE(att_flat.bound == Bound::Compute);
  CHECK(att_curved.time_s / att_flat.time_s == Approx(2.0 * 2000 / 2001));
  CHECK(att_curved.flops == att_flat.flops);
  BatchShape shape;
  shape.add_prefill(100, 50);
  CHECK(shape.prefill_masked_pairs == 100.0 * 99 / 2);
}

TEST_CASE("GEMM tiles run in waves: idle tile slots cost their quantization weight", "[roofline]") {
  // One full wave of 128 x 128 tiles on 108 SMs wastes nothing; one more token row adds a
  // second row of tiles and a second wave.
  const GemmTiling a100{128, 128, 108};
  CHECK(gemm_idle_flops(128, 108 * 128, 4096, a100) == 0);
  CHECK(gemm_idle_flops(129, 108 * 128, 4096, a100) ==
        2.0 * 4096 * (2 * 108 * 128 * 128 - 129.0 * 108 * 128));
  CHECK(gemm_idle_flops(1, 4096, 4096, GemmTiling{128, 128, 0}) == 0);  // SMs unknown: off
  CHECK(gemm_work(129, 108 * 128, 4096, 2, 2, a100).idle_flops ==
        gemm_idle_flops(129, 108 * 128, 4096, a100));

  // The MLP up projection of Llama-2-7B at 2,000 tokens: [2000 x 4096] x [4096 x 22016] in
  // 16 x 172 = 2,752 tiles, 26 waves of 108, so 2,808 tile slots.
  const ModelSpec m = shipped_model("llama-2-7b");
  HardwareProfile hw = shipped_hardware("a100-80gb");
  hw.sm_count = 108;
  hw.kernels.gemm = {0.7, 0, 0.8, 0, 0};
  hw.kernels.gemm_operators = {};
  HardwareProfile quantized = hw;
  quantized.kernels.gemm.quantization_weight = 1;
  const auto plain = RooflineModel(m, hw, RooflineOptions{}).estimate(prefill_batch(2000));
  const auto waves = RooflineModel(m, quantized, RooflineOptions{}).estimate(prefill_batch(2000));
  const auto& up = plain.at(OperatorKind::MlpUp);
  REQUIRE(up.bound == Bound::Compute);
  const double idle = 32 * 2.0 * 4096 * (2808.0 * 128 * 128 - 2000.0 * 22016);
  const double peak = hw.peak_flops(DType::FP16);
  CHECK(waves.at(OperatorKind::MlpUp).time_s - up.time_s == Approx(idle / peak / 0.7));
  CHECK(waves.at(OperatorKind::MlpUp).flops == up.flops);  // idle slots are not work

  // An operator's own class prices that operator only.
  HardwareProfile own = hw;
  KernelCeilings down = hw.kernels.gemm;
  down.compute_efficiency = 0.35;
  own.kernels.gemm_operators[static_cast<std::size_t>(GemmOperator::MlpDown)] = down;
  const auto split = RooflineModel(m, own, RooflineOptions{}).estimate(prefill_batch(2000));
  CHECK(split.at(OperatorKind::MlpUp).time_s == up.time_s);
  CHECK(split.at(OperatorKind::MlpDown).time_s - 32 * down.fixed_s ==
        Approx(2 * (plain.at(OperatorKind::MlpDown).time_s - 32 * down.fixed_s)));
}

TEST_CASE("an operator is compute-bound exactly when its intensity exceeds its balance",
          "[roofline]") {
  // Idle tile slots and masked pairs slow the compute side; the balance must count them as
  // the bound does, or a batch-1 GEMV reads "compute-bound" below its balance.
  std::vector<BatchShape> shapes{decode_batch(1, 1024),   decode_batch(7, 300),
                                 decode_batch(256, 2048), prefill_batch(1),
                                 prefill_batch(129),      prefill_batch(2048)};
  BatchShape chunk;
  chunk.add_prefill(512, 1536);
  chunk.add_decode(1024);
  shapes.push_back(chunk);
  for (const char* model_name : {"llama-3-8b", "llama-2-70b", "mixtral-8x7b"}) {
    const ModelSpec model = shipped_model(model_name);
    for (const char* hw : kShipped) {
      const RooflineModel roofline(model, shipped_hardware(hw), RooflineOptions{});
      for (std::size_t s = 0; s < shapes.size(); ++s) {
        const IterationCost cost = roofline.estimate(shapes[s]);
        for (std::size_t i = 0; i < kOperatorCount; ++i) {
          const OperatorCost& op = cost.operators[i];
          if (op.bound != Bound::Compute && op.bound != Bound::Memory) continue;
          INFO(model_name << " on " << hw << ", shape " << s << ", "
                          << operator_name(static_cast<OperatorKind>(i)) << ": intensity "
                          << op.intensity_flops_per_byte() << ", balance "
                          << op.balance_flops_per_byte);
          CHECK((op.bound == Bound::Compute) ==
                (op.intensity_flops_per_byte() > op.balance_flops_per_byte));
        }
      }
    }
  }
}

TEST_CASE("the engine's host work adds to the device time or overlaps it", "[roofline][engine]") {
  const ModelSpec model = shipped_model("llama-3-8b");
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  const BatchShape shape = decode_batch(8, 1000);
  const double device_s = RooflineModel(model, hw, RooflineOptions{}).estimate(shape).total_time_s;
  RooflineOptions added;
  added.engine.host.schedule_s = 1e-4;
  added.engine.host.step_s = 2e-4;
  added.engine.host.per_sequence_s = 1e-5;
  added.engine.host.per_token_s = 1e-6;
  const double host_s = 1e-4 + 2e-4 + 8 * 1e-5 + 8 * 1e-6;
  const IterationCost sum = RooflineModel(model, hw, added).estimate(shape);
  CHECK(sum.total_time_s == Approx(device_s + host_s));
  CHECK(sum.at(OperatorKind::Overhead).time_s == Approx(host_s));

  // Overlapped, a host shorter than the device is hidden; a longer one sets the pace.
  RooflineOptions overlapped = added;
  overlapped.engine.host.overlaps_device = true;
  CHECK(RooflineModel(model, hw, overlapped).estimate(shape).total_time_s == Approx(device_s));
  overlapped.engine.host.step_s = 0.05;
  CHECK(RooflineModel(model, hw, overlapped).estimate(shape).total_time_s ==
        Approx(host_s - 2e-4 + 0.05));

  // Multi-step scheduling pays the scheduling once per N decode-only steps.
  RooflineOptions multi = added;
  multi.engine.host.decode_steps_per_schedule = 4;
  CHECK(RooflineModel(model, hw, multi).estimate(shape).total_time_s ==
        Approx(device_s + host_s - 1e-4 * 3 / 4));
}

TEST_CASE("CUDA graphs pad the batch, and without them a step takes at least its launches",
          "[roofline][engine]") {
  const ModelSpec model = shipped_model("llama-3-8b");
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  RooflineOptions graphed;
  graphed.engine.cuda_graph_capture_sizes = {8, 16, 32};
  const RooflineModel padded(model, hw, graphed);
  const RooflineModel bare(model, hw, RooflineOptions{});
  // 9 sequences run the graph of 16: their GEMMs cost what 16 tokens' do.
  CHECK(padded.estimate(decode_batch(9, 500)).at(OperatorKind::MlpUp).time_s ==
        Approx(bare.estimate(decode_batch(16, 500)).at(OperatorKind::MlpUp).time_s));
  CHECK(padded.estimate(decode_batch(9, 500)).at(OperatorKind::AttentionDecode).time_s ==
        bare.estimate(decode_batch(9, 500)).at(OperatorKind::AttentionDecode).time_s);
  // A prompt step is not graphed unless the engine graphs mixed batches.
  CHECK(padded.estimate(prefill_batch(9)).at(OperatorKind::MlpUp).time_s ==
        bare.estimate(prefill_batch(9)).at(OperatorKind::MlpUp).time_s);

  // Eager launches: 32 layers x (5 GEMM-like + 5 elementwise + 1 attention) + 3 kernels.
  RooflineOptions eager;
  eager.engine.host.kernel_launch_s = 1e-3;  // absurdly slow launches make the floor bind
  const IterationCost floor = RooflineModel(model, hw, eager).estimate(decode_batch(1, 100));
  CHECK(floor.total_time_s == Approx(1e-3 * (32 * 11 + 3)));
  // The graphs cover a batch of 8 and skip the launches; 40 tokens fall outside them.
  eager.engine.cuda_graph_capture_sizes = {8, 16, 32};
  const RooflineModel mixed(model, hw, eager);
  CHECK(mixed.estimate(decode_batch(8, 100)).total_time_s ==
        padded.estimate(decode_batch(8, 100)).total_time_s);
  CHECK(mixed.estimate(decode_batch(40, 100)).total_time_s == Approx(1e-3 * (32 * 11 + 3)));
}
