// Decode runs priced at once (RooflineModel::estimate_decode_run) and the decode-step memo:
// both must give estimate()'s prices of each step, to the last bit, since bulk decoding's
// outputs are byte-identical to step-by-step simulation's.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::decode_batch;
using test::shipped_hardware;
using test::shipped_model;

namespace {

EngineCosts some_engine(bool overlaps, bool graphs) {
  EngineCosts e;
  e.host = {2e-4, 3e-4, 5e-6, 1e-7, overlaps, 6e-6, 4};
  e.kernels.decode_attention = 1.3;
  e.kernels.gemm = 0.9;
  e.kernels.all_reduce_latency_s = 8e-6;
  if (graphs) e.cuda_graph_capture_sizes = {1, 2, 4, 8, 16, 32, 64};
  return e;
}

// Prices a run of `steps` iterations from `first` (estimate_decode_run) and requires each
// duration to equal estimate() of its iteration to the last bit; returns the durations.
std::vector<double> run_priced_as_iterations(const RooflineModel& model, const BatchShape& first,
                                             std::size_t steps) {
  std::vector<double> durations(steps);
  model.estimate_decode_run(first, durations);
  BatchShape shape = first;
  for (std::size_t step = 0; step < durations.size(); ++step) {
    INFO("step " << step);
    REQUIRE(durations[step] == model.estimate(shape).total_time_s);
    shape.decode_context_tokens += shape.decode_sequences;
  }
  return durations;
}

}  // namespace

TEST_CASE("a decode run is priced exactly as its iterations one by one", "[roofline]") {
  // Bulk decoding prices a run with estimate_decode_run; step-by-step runs call estimate().
  // Byte-identical outputs need the two to agree to the last bit, for dense and MoE models,
  // tensor parallelism, calibrated profiles and engine costs (overlapped or added host work,
  // graphs padding the batch or a launch floor).
  for (const auto& [model_name, hw_name, tp, engine] :
       {std::tuple{"llama-3-8b", "h100-sxm", 1, EngineCosts{}},
        std::tuple{"llama-2-70b", "a100-80gb", 4, some_engine(true, true)},
        std::tuple{"mixtral-8x7b", "h200", 2, some_engine(false, true)},
        std::tuple{"llama-3-8b", "h100-sxm", 1, some_engine(false, false)},
        std::tuple{"llama-3-8b", "h100-sxm", 1, some_engine(true, false)}}) {
    INFO(model_name << " on " << hw_name << ", TP " << tp);
    RooflineOptions options;
    options.parallelism.tensor = tp;
    options.engine = engine;
    const RooflineModel model(shipped_model(model_name), shipped_hardware(hw_name), options);
    BatchShape first;
    for (int s = 0; s < 37; ++s)
      first.add_decode(100 + 31 * s);
    const std::vector<double> durations = run_priced_as_iterations(model, first, 300);
    CHECK(durations.back() > durations.front());  // longer contexts read more KV
  }
}

TEST_CASE("a decode run with windowed, chunked or recurrent layers is priced as its iterations",
          "[roofline]") {
  // Those layers take the general formula of a run's loop (full-attention models an inlined
  // one): each iteration must still equal estimate() to the last bit, contexts crossing the
  // window, with the memo on and off, and with the windowed layers on ceilings of their own.
  HardwareProfile apart = shipped_hardware("h100-sxm");
  KernelCeilings window = apart.kernels.decode_attention;
  window.memory_efficiency *= 0.5;
  window.fixed_s *= 2;
  apart.kernels.decode_attention_window = window;
  for (const auto& [model_name, hw, memo] :
       {std::tuple{"gemma-3-27b", shipped_hardware("h100-sxm"), true},
        std::tuple{"gemma-3-27b", apart, true}, std::tuple{"gemma-3-27b", apart, false},
        std::tuple{"llama-4-scout", shipped_hardware("h200"), true},
        std::tuple{"qwen3-next-80b-a3b", shipped_hardware("h200"), true},
        std::tuple{"llama-3-8b", shipped_hardware("h100-sxm"), false}}) {
    INFO(model_name << ", memo " << memo);
    RooflineOptions options;
    options.memoize_decode_steps = memo;
    options.parallelism.tensor = 2;
    const RooflineModel model(shipped_model(model_name), hw, options);
    BatchShape first;
    for (int s = 0; s < 9; ++s)
      first.add_decode(10 + 97 * s);  // some below a 1,024-token window, all past it later
    run_priced_as_iterations(model, first, 400);
  }
}

TEST_CASE("the decode-step memo gives the plain prices to the last bit", "[roofline]") {
  // Dense and MoE, TP, DP attention with EP, graphs padding the batch or not; decode counts
  // seen again, after other counts and after steps with prompts, and a count whose sampled
  // sequences differ.
  for (const auto& [model_name, tp, dp, engine] :
       {std::tuple{"llama-3-8b", 1, 1, EngineCosts{}},
        std::tuple{"llama-2-70b", 4, 1, some_engine(true, true)},
        std::tuple{"mixtral-8x7b", 2, 2, some_engine(false, true)},
        std::tuple{"llama-3-8b", 1, 1, some_engine(true, false)}}) {
    INFO(model_name << ", TP " << tp << ", DP " << dp);
    RooflineOptions options;
    options.parallelism.tensor = tp;
    options.parallelism.data = dp;
    options.parallelism.expert = dp > 1;
    options.engine = engine;
    RooflineOptions plain_options = options;
    plain_options.memoize_decode_steps = false;
    const ModelSpec model = shipped_model(model_name);
    const HardwareProfile hw = shipped_hardware("h100-sxm");
    const RooflineModel memo(model, hw, options);
    const RooflineModel plain(model, hw, plain_options);
    std::vector<BatchShape> shapes;
    for (const std::int64_t sequences : {1, 7, 64, 7, 300, 1, 64, 300})
      shapes.push_back(decode_batch(sequences, 1000 + 17 * sequences));
    BatchShape mixed = decode_batch(7, 500);
    mixed.add_prefill(100, 0);
    shapes.insert(shapes.begin() + 3, mixed);
    BatchShape unsampled = decode_batch(7, 500);
    unsampled.sampled_sequences = 3;
    shapes.push_back(unsampled);
    shapes.push_back(decode_batch(7, 9000));
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      INFO("shape " << s);
      const IterationCost a = memo.estimate(shapes[s]);
      const IterationCost b = plain.estimate(shapes[s]);
      REQUIRE(a.total_time_s == b.total_time_s);
      for (std::size_t i = 0; i < kOperatorCount; ++i) {
        CHECK(a.operators[i].flops == b.operators[i].flops);
        CHECK(a.operators[i].bytes == b.operators[i].bytes);
        CHECK(a.operators[i].time_s == b.operators[i].time_s);
        CHECK(a.operators[i].balance_flops_per_byte == b.operators[i].balance_flops_per_byte);
        CHECK(a.operators[i].bound == b.operators[i].bound);
      }
    }
  }
}
