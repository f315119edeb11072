// The engine's kernel factors on the roofline: each scales the part of an operator's time it
// names, and nothing else.
#include <catch2/catch.hpp>

#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::decode_batch;
using test::prefill_batch;
using test::shipped_hardware;
using test::shipped_model;

TEST_CASE("kernel factors scale their class time and a custom all-reduce its latency",
          "[roofline][engine]") {
  const ModelSpec model = shipped_model("llama-2-70b");
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  RooflineOptions base;
  base.parallelism.tensor = 4;
  RooflineOptions scaled = base;
  scaled.engine.kernels.decode_attention = 1.5;
  scaled.engine.kernels.gemm = 0.8;
  scaled.engine.kernels.all_reduce_latency_s = 5e-6;
  const BatchShape shape = decode_batch(32, 2000);
  const IterationCost a = RooflineModel(model, hw, base).estimate(shape);
  const IterationCost b = RooflineModel(model, hw, scaled).estimate(shape);
  CHECK(b.at(OperatorKind::AttentionDecode).time_s ==
        Approx(1.5 * a.at(OperatorKind::AttentionDecode).time_s));
  CHECK(b.at(OperatorKind::QkvProj).time_s == Approx(0.8 * a.at(OperatorKind::QkvProj).time_s));
  CHECK(b.at(OperatorKind::Norms).time_s == a.at(OperatorKind::Norms).time_s);
  const double layers = 80;
  CHECK(a.at(OperatorKind::TpAllReduce).time_s - b.at(OperatorKind::TpAllReduce).time_s ==
        Approx(2 * layers * (hw.overheads.collective_latency_s - 5e-6)));
}

TEST_CASE("a GEMM memory factor scales the weight streaming alone", "[roofline][engine]") {
  // Llama-2-70B on H100, TP 4: batch-1 decode GEMMs stream weights (memory-bound), a 4,096-
  // token prefill's run at the tensor cores (compute-bound).
  const ModelSpec model = shipped_model("llama-2-70b");
  const HardwareProfile hw = shipped_hardware("h100-sxm");
  RooflineOptions both;
  both.parallelism.tensor = 4;
  both.engine.kernels.gemm = 1.3;
  RooflineOptions apart = both;
  apart.engine.kernels.gemm_memory = 1.0;
  RooflineOptions plain = both;
  plain.engine.kernels.gemm = 1.0;
  const RooflineModel with_both(model, hw, both);
  const RooflineModel with_apart(model, hw, apart);
  const RooflineModel with_none(model, hw, plain);
  const auto mlp_up = [](const RooflineModel& m, const BatchShape& shape) {
    return m.estimate(shape).at(OperatorKind::MlpUp);
  };
  // Decode: the memory side is the plain one, the fixed cost per kernel the factor's.
  const BatchShape decode = decode_batch(1, 1000);
  REQUIRE(mlp_up(with_none, decode).bound == Bound::Memory);
  CHECK(mlp_up(with_both, decode).time_s == Approx(1.3 * mlp_up(with_none, decode).time_s));
  const double fixed_s = hw.kernels.gemm_for(GemmOperator::MlpUp).fixed_s * 80;  // a kernel a layer
  CHECK(mlp_up(with_apart, decode).time_s ==
        Approx(mlp_up(with_none, decode).time_s + 0.3 * fixed_s));
  // Prefill: compute-bound, the factor whole either way.
  const BatchShape prompt = prefill_batch(4096);
  REQUIRE(mlp_up(with_none, prompt).bound == Bound::Compute);
  CHECK(mlp_up(with_apart, prompt).time_s == Approx(mlp_up(with_both, prompt).time_s));
  CHECK(mlp_up(with_apart, prompt).time_s == Approx(1.3 * mlp_up(with_none, prompt).time_s));
}
