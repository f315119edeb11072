#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::decode_batch;
using test::shipped_hardware;
using test::shipped_model;

namespace {

// An engine whose decode attention runs on CUDA cores (TensorRT-LLM 0.9's masked MHA kernel)
// for models with fewer than 8 query heads per KV head.
RooflineOptions core_attention(double efficiency, double sequence_keys, double factor = 1) {
  RooflineOptions o;
  o.engine.kernels.decode_attention_core_efficiency = efficiency;
  o.engine.kernels.decode_attention_core_sequence_keys = sequence_keys;
  o.engine.kernels.decode_attention_tensor_core_min_group = 8;
  o.engine.kernels.decode_attention = factor;
  return o;
}

}  // namespace

TEST_CASE("CUDA-core decode attention: FLOPs and fixed work per sequence at the fp32 peak",
          "[roofline][engine]") {
  const ModelSpec m = shipped_model("llama-2-7b");  // 32 layers, 32 heads of 128, MHA
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  const double n = 50, context = 1000, e = 0.02, k0 = 100;
  const auto shape = decode_batch(50, 1000);
  const auto plain = RooflineModel(m, hw, RooflineOptions{}).estimate(shape);
  const auto core = RooflineModel(m, hw, core_attention(e, k0)).estimate(shape);
  const OperatorCost& before = plain.at(OperatorKind::AttentionDecode);
  const OperatorCost& after = core.at(OperatorKind::AttentionDecode);
  REQUIRE(before.bound == Bound::Memory);
  const double fixed_s = 32 * hw.kernels.decode_attention.fixed_s;
  const double memory_s = before.time_s - fixed_s;
  // 4 x 32 x 128 FLOPs per key and layer over the n x (context + k0) keys' worth of work.
  const double compute_s = 32 * 4.0 * 32 * 128 * n * (context + k0) / (66.9e12 * e);
  REQUIRE(compute_s > memory_s);
  CHECK(after.time_s == Approx(compute_s + fixed_s).epsilon(1e-12));
  CHECK(after.bound == Bound::Compute);
  // The FLOPs and bytes reported are the kernel's work, not its fixed costs.
  CHECK(after.flops == before.flops);
  CHECK(after.bytes == before.bytes);
  // Every other operator is priced as before.
  CHECK(core.total_time_s - after.time_s ==
        Approx(plain.total_time_s - before.time_s).epsilon(1e-12));
  // The engine's decode attention factor scales the CUDA-core time as it does the ceilings.
  const auto slower = RooflineModel(m, hw, core_attention(e, k0, 1.5)).estimate(shape);
  CHECK(slower.at(OperatorKind::AttentionDecode).time_s ==
        Approx(1.5 * compute_s + 1.5 * fixed_s).epsilon(1e-12));
}

TEST_CASE("CUDA-core decode attention: a bandwidth-bound case keeps the memory time",
          "[roofline][engine]") {
  const ModelSpec m = shipped_model("llama-2-7b");
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  const auto shape = decode_batch(8, 4000);
  const auto plain = RooflineModel(m, hw, RooflineOptions{}).estimate(shape);
  const auto core = RooflineModel(m, hw, core_attention(1.0, 0)).estimate(shape);
  CHECK(core.at(OperatorKind::AttentionDecode).time_s ==
        plain.at(OperatorKind::AttentionDecode).time_s);
}

TEST_CASE("CUDA-core decode attention covers windowed layers and spares tensor-core GQA models",
          "[roofline][engine]") {
  const HardwareProfile hw = shipped_hardware("h200");
  // Mistral-7B: 32 windowed layers (W = 4,096), 32 query heads over 8 KV heads (group 4).
  const ModelSpec mistral = shipped_model("mistral-7b");
  const auto shape = decode_batch(64, 2000);
  const auto core = RooflineModel(mistral, hw, core_attention(0.1, 200)).estimate(shape);
  const double compute_s =
      32 * 4.0 * 32 * 128 * 64 * (2000 + 200) / (hw.peak_flops(DType::FP32) * 0.1);
  CHECK(core.at(OperatorKind::AttentionDecode).time_s ==
        Approx(compute_s + 32 * hw.kernels.decode_attention.fixed_s).epsilon(1e-12));
  // Llama-2-70B: 64 query heads over 8 KV heads (group 8), the engine's tensor-core kernel.
  const ModelSpec llama70 = shipped_model("llama-2-70b");
  const auto a = RooflineModel(llama70, hw, RooflineOptions{}).estimate(shape);
  const auto b = RooflineModel(llama70, hw, core_attention(0.1, 200)).estimate(shape);
  CHECK(b.total_time_s == a.total_time_s);
  // Without a group limit every model takes the CUDA-core kernel.
  RooflineOptions all = core_attention(0.1, 200);
  all.engine.kernels.decode_attention_tensor_core_min_group = 0;
  CHECK(RooflineModel(llama70, hw, all).estimate(shape).total_time_s > a.total_time_s);
  // MLA's absorbed decode never runs the multi-head kernel.
  const ModelSpec deepseek = shipped_model("deepseek-v3");
  CHECK(RooflineModel(deepseek, hw, all).estimate(shape).total_time_s ==
        RooflineModel(deepseek, hw, RooflineOptions{}).estimate(shape).total_time_s);
}

TEST_CASE("a decode run with CUDA-core attention is priced exactly as its iterations",
          "[roofline][engine]") {
  const RooflineModel model(shipped_model("mistral-7b"), shipped_hardware("h100-sxm"),
                            core_attention(0.135, 250));
  BatchShape shape;
  for (int s = 0; s < 29; ++s)
    shape.add_decode(50 + 17 * s);
  std::vector<double> durations(200);
  model.estimate_decode_run(shape, durations);
  for (std::size_t step = 0; step < durations.size(); ++step) {
    INFO("step " << step);
    REQUIRE(durations[step] == model.estimate(shape).total_time_s);
    shape.decode_context_tokens += shape.decode_sequences;
  }
}

TEST_CASE("Decode attention over an FP8 KV cache takes its own ceilings where a profile has them",
          "[roofline]") {
  const ModelSpec m = shipped_model("llama-3.1-8b");
  HardwareProfile hw = shipped_hardware("h100-sxm");
  REQUIRE_FALSE(hw.kernels.decode_attention_fp8_kv.has_value());
  RooflineOptions fp8;
  fp8.kv_dtype = DType::FP8;
  const auto shape = decode_batch(64, 4000);  // memory-bound: the cache read dominates
  const auto time_s = [&](const HardwareProfile& h, const RooflineOptions& o) {
    return RooflineModel(m, h, o).estimate(shape).at(OperatorKind::AttentionDecode).time_s;
  };
  const double bf16_s = time_s(hw, RooflineOptions{});
  const double fp8_s = time_s(hw, fp8);
  // Without the class: the 16-bit ceilings over half the bytes.
  CHECK(fp8_s < 0.6 * bf16_s);
  KernelCeilings own = hw.kernels.decode_attention;
  own.memory_efficiency /= 2;
  hw.kernels.decode_attention_fp8_kv = own;
  // With it: the FP8 cache read at half the bandwidth share, the 16-bit one unchanged.
  const double fixed_s = 32 * own.fixed_s;
  CHECK(time_s(hw, fp8) - fixed_s == Approx(2 * (fp8_s - fixed_s)).epsilon(0.02));
  CHECK(time_s(hw, RooflineOptions{}) == bf16_s);
}

TEST_CASE("MLA decode takes its own ceilings where a profile has them", "[roofline]") {
  const ModelSpec mla = shipped_model("deepseek-v3");
  const ModelSpec gqa = shipped_model("llama-3.1-8b");
  HardwareProfile hw = shipped_hardware("h200");
  REQUIRE_FALSE(hw.kernels.decode_attention_mla.has_value());
  const auto shape = decode_batch(64, 8000);
  const auto time_s = [&](const ModelSpec& m, const HardwareProfile& h) {
    return RooflineModel(m, h, RooflineOptions{}).estimate(shape).at(OperatorKind::AttentionDecode);
  };
  const OperatorCost before = time_s(mla, hw);
  const double gqa_s = time_s(gqa, hw).time_s;
  KernelCeilings own = hw.kernels.decode_attention;
  own.memory_efficiency /= 2;
  own.compute_efficiency /= 2;
  hw.kernels.decode_attention_mla = own;
  // The MLA model's absorbed decode at half the compute and bandwidth shares; the GQA model
  // unchanged.
  const double fixed_s = static_cast<double>(mla.num_layers) * own.fixed_s;
  CHECK(time_s(mla, hw).time_s - fixed_s == Approx(2 * (before.time_s - fixed_s)).epsilon(1e-9));
  CHECK(time_s(gqa, hw).time_s == gqa_s);
}

TEST_CASE("Windowed decode layers take their own ceilings where a profile has them", "[roofline]") {
  const ModelSpec m = shipped_model("gemma-3-27b");  // five 1,024-token window layers to a full one
  HardwareProfile hw = shipped_hardware("h100-sxm");
  REQUIRE_FALSE(hw.kernels.decode_attention_window.has_value());
  const auto shape = decode_batch(32, 16000);  // memory-bound, contexts past the window
  const auto attention = [&](const HardwareProfile& h) {
    return RooflineModel(m, h, RooflineOptions{}).estimate(shape).at(OperatorKind::AttentionDecode);
  };
  const OperatorCost one_class = attention(hw);
  // The same ceilings, apart: the bytes and FLOPs are the same, and the time is the sum of two
  // memory-bound kernel times, which equals the one kernel time when both are memory-bound.
  hw.kernels.decode_attention_window = hw.kernels.decode_attention;
  const OperatorCost same = attention(hw);
  CHECK(same.bytes == one_class.bytes);
  CHECK(same.flops == one_class.flops);
  CHECK(same.time_s == Approx(one_class.time_s).epsilon(1e-12));
  // Half the bandwidth share for the windowed layers: their part of the read takes twice as long.
  KernelCeilings slow = hw.kernels.decode_attention;
  slow.memory_efficiency /= 2;
  hw.kernels.decode_attention_window = slow;
  const OperatorCost halved = attention(hw);
  const auto window_tokens = static_cast<double>(m.sliding_window_tokens.value());
  const double windowed_share = [&] {
    // Bytes of the windowed layers over all bytes: each layer reads its keys' K and V.
    const auto window_layers = static_cast<double>(std::count(
        m.layer_attention.begin(), m.layer_attention.end(), LayerAttention::SlidingWindow));
    const double full_layers = static_cast<double>(m.num_layers) - window_layers;
    return window_layers * window_tokens / (window_layers * window_tokens + full_layers * 16000);
  }();
  const double memory_s =
      one_class.time_s - static_cast<double>(m.num_layers) * hw.kernels.decode_attention.fixed_s;
  CHECK(halved.time_s - one_class.time_s == Approx(windowed_share * memory_s).epsilon(0.02));
}
