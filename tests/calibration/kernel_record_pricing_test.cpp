#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/calibration/measurement.h"
#include "sim/calibration/prediction.h"
#include "sim/core/error.h"
#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::decode_batch;
using test::shipped_hardware;
using test::shipped_model;

namespace {

// A device with round figures and flat ceilings, so that the hand computations below are short.
HardwareProfile round_device() {
  HardwareProfile p;
  p.name = "round";
  p.peak_flops_per_s[static_cast<std::size_t>(DType::BF16)] = 1000e12;
  p.peak_flops_per_s[static_cast<std::size_t>(DType::FP16)] = 1000e12;
  p.peak_flops_per_s[static_cast<std::size_t>(DType::FP8)] = 2000e12;
  p.peak_flops_per_s[static_cast<std::size_t>(DType::FP32)] = 60e12;
  p.memory_bandwidth_bytes_per_s = 4e12;
  p.sm_count = 132;
  KernelCeilings& g = p.kernels.gemm;
  g.compute_efficiency = 0.8;
  g.compute_half_size = 8;
  g.memory_efficiency = 0.9;
  g.memory_half_size = 0;
  g.fixed_s = 2e-6;
  g.quantization_weight = 0.5;
  return p;
}

Measurement gemm(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
  Measurement r;
  r.kind = MeasurementKind::Gemm;
  r.where = "test";
  r.median_s = 1e-5;
  r.m = m;
  r.n = n;
  r.k = k;
  r.dtype = dtype;
  return r;
}

double memory_s(double bytes) {
  return bytes / 4e12 / 0.9;
}

}  // namespace

TEST_CASE("single GEMM records are priced by the kernel chosen for their m",
          "[calibration][by_m]") {
  const HardwareProfile hw = round_device();
  const double n = 4096, k = 4096;
  SECTION("one 16-bit token: a GEMV on the CUDA cores, no ramp") {
    const double compute = 2 * n * k / 60e12 / 0.8;
    const double memory = memory_s(n * k * 2 + (n + k) * 2);
    CHECK(predict_seconds(gemm(1, 4096, 4096, DType::BF16), hw) ==
          Approx(std::max(compute, memory) + 2e-6).epsilon(1e-12));
  }
  SECTION("two 16-bit tokens: the fitted tile, its ramp and its idle slots") {
    // One row of 32 tiles of 128 x 128 in one wave of 132 SMs.
    const double idle = 2 * k * (132 * 128.0 * 128 - 2 * n);
    const double compute = (2 * 2 * n * k / 1000e12 * (1 + 8.0 / 2) + 0.5 * idle / 1000e12) / 0.8;
    const double memory = memory_s(n * k * 2 + 2 * (n + k) * 2);
    CHECK(predict_seconds(gemm(2, 4096, 4096, DType::BF16), hw) ==
          Approx(std::max(compute, memory) + 2e-6).epsilon(1e-12));
  }
  SECTION("int4 weights against fp16 activations: Marlin's 16-row tile, scales read") {
    Measurement r = gemm(4, 4096, 4096, DType::INT4);
    r.activation_dtype = DType::FP16;
    r.group_size = 128;
    const double compute = (2 * 4 * n * k + 2 * k * (16 - 4) * n) / 1000e12 / 0.8;
    const double memory = memory_s(n * k * (0.5 + 2.0 / 128) + 4 * (n + k) * 2);
    CHECK(predict_seconds(r, hw) == Approx(std::max(compute, memory) + 2e-6).epsilon(1e-12));
    // The harness's kernel is a CUDA-core GEMV: priced as one.
    r.kernel = Measurement::Kernel{"int4_gemv", "gemv", "cuda", 4, 128};
    const double gemv = 2 * 4 * n * k / 60e12 / 0.8;
    CHECK(predict_seconds(r, hw) == Approx(std::max(gemv, memory) + 2e-6).epsilon(1e-12));
    CHECK(r.class_name() == "gemm.int4");
  }
  SECTION("per-tensor fp8 at 4 tokens: 64 x 64 tensor-core tiles, every slot at the fp8 peak") {
    // 64 column tiles of 64 x 64 in one wave of 132 SMs.
    const double idle = 2 * k * (132 * 64.0 * 64 - 4 * n);
    const double compute = (2 * 4 * n * k + idle) / 2000e12 / 0.8;
    const double memory = memory_s(n * k + 4 * (n + k) * 2);
    CHECK(predict_seconds(gemm(4, 4096, 4096, DType::FP8), hw) ==
          Approx(std::max(compute, memory) + 2e-6).epsilon(1e-12));
  }
}

TEST_CASE("a single GEMM record costs what the roofline prices one layer's at",
          "[calibration][by_m]") {
  // Llama-3.1-8B's mlp_up (n = 2 x 14336, k = 4096) at the decode batch's m, one layer.
  const ModelSpec model = shipped_model("llama-3.1-8b");
  const HardwareProfile hw = shipped_hardware("h200");
  const double layers = static_cast<double>(model.num_layers);
  for (const DType dtype : {DType::BF16, DType::FP8}) {
    for (const std::int64_t m : {1, 3, 4, 16, 200}) {
      INFO(dtype_name(dtype) << " weights, m = " << m);
      RooflineOptions options;
      options.weight_dtype = dtype;
      const IterationCost cost = RooflineModel(model, hw, options).estimate(decode_batch(m, 512));
      Measurement r = gemm(m, 2 * 14336, 4096, dtype);
      r.gemm_operator = "mlp_up";
      CHECK(predict_seconds(r, hw) * layers ==
            Approx(cost.at(OperatorKind::MlpUp).time_s).epsilon(1e-9));
    }
  }
}

TEST_CASE("moe_gemm records are priced as the grouped kernel over the rows they ran",
          "[calibration][by_m]") {
  const HardwareProfile hw = round_device();
  // Three tokens top-2 of 4 experts: 3 experts touched, 6 routed rows, 12 in tiles of 4.
  const nlohmann::json document = {{"format", "servesim-measurements"},
                                   {"version", 1},
                                   {"device", "round"},
                                   {"measurements",
                                    {{{"operator_kind", "moe_gemm"},
                                      {"repeats", 3},
                                      {"median_s", 2e-5},
                                      {"operator", "mlp_up"},
                                      {"n", 1536},
                                      {"k", 2048},
                                      {"dtype", "bf16"},
                                      {"tokens", 3},
                                      {"top_k", 2},
                                      {"experts", 4},
                                      {"experts_touched", 3},
                                      {"routed_rows", 6},
                                      {"padded_rows", 12},
                                      {"seed", 9},
                                      {"kernel",
                                       {{"name", "grouped_wmma"},
                                        {"kind", "grouped"},
                                        {"cores", "tensor"},
                                        {"tile_m", 4},
                                        {"tile_n", 64}}}}}}};
  const auto records = measurements_from_json(document, "moe.json");
  REQUIRE(records.size() == 1);
  const Measurement& r = records[0];
  CHECK(r.class_name() == "moe_gemm.mlp_up");
  const double n = 1536, k = 2048;
  // 3 row tiles x 24 column tiles of 4 x 64 fill 72 of 132 SMs in one wave.
  const double idle = 2 * k * (132 * 4.0 * 64 - 6 * n);
  const double compute = (2 * 6 * n * k + idle) / 1000e12 / 0.8;
  const double memory = memory_s(3 * n * k * 2 + (3 * k + 6 * n) * 2);
  CHECK(predict_seconds(r, hw) == Approx(std::max(compute, memory) + 2e-6).epsilon(1e-12));

  SECTION("the writer writes what the reader read") {
    std::ostringstream out;
    write_measurements_json(out, "round", records);
    const auto again = measurements_from_json(nlohmann::json::parse(out.str()), "again.json");
    REQUIRE(again.size() == 1);
    CHECK(again[0].padded_rows == 12);
    CHECK(again[0].kernel->tile_m == 4);
    CHECK(predict_seconds(again[0], hw) == predict_seconds(r, hw));
  }
  SECTION("an inconsistent routing is refused naming the record and field") {
    nlohmann::json bad = document;
    bad["measurements"][0]["routed_rows"] = 5;
    CHECK_THROWS_WITH(measurements_from_json(bad, "moe.json"),
                      Catch::Matchers::Contains("moe.json") &&
                          Catch::Matchers::Contains("measurements[0].routed_rows") &&
                          Catch::Matchers::Contains("tokens x top_k (6)"));
    bad = document;
    bad["measurements"][0]["experts_touched"] = 1;
    CHECK_THROWS_WITH(measurements_from_json(bad, "moe.json"),
                      Catch::Matchers::Contains("measurements[0].experts_touched"));
    bad = document;
    bad["measurements"][0]["padded_rows"] = 4;
    CHECK_THROWS_WITH(measurements_from_json(bad, "moe.json"),
                      Catch::Matchers::Contains("measurements[0].padded_rows"));
    bad = document;
    bad["measurements"][0]["operator"] = "qkv";
    CHECK_THROWS_WITH(measurements_from_json(bad, "moe.json"),
                      Catch::Matchers::Contains("mlp_up or mlp_down"));
  }
}
