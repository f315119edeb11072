#include <catch2/catch.hpp>

#include "sim/calibration/calibrate.h"
#include "sim/calibration/ceiling_fit.h"
#include "sim/calibration/prediction.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A profile with known parameters, different from the base the fit starts from.
HardwareProfile truth_profile() {
  HardwareProfile p = test::shipped_hardware("a100-80gb");
  p.kernels.gemm = {0.72, 90, 0.81, 3, 5e-6};
  p.kernels.gemm.quantization_weight = 0.3;  // a100-80gb has its SM count: waves count
  p.kernels.decode_attention = {0.45, 0, 0.78, 1.5, 9e-6};
  p.kernels.prefill_attention = {0.4, 200, 0.6, 0, 4e-6};
  p.efficiency.gpu_link = 0.55;
  p.overheads.collective_latency_s = 2.5e-5;
  p.efficiency.memory_bandwidth = 0.85;
  p.overheads.kernel_launch_s = 4e-6;
  return p;
}

// The host costs of an engine the host_overhead records were made with.
EngineCosts truth_engine() {
  EngineCosts e;
  e.host.step_s = 7e-4;
  e.host.per_sequence_s = 3e-5;
  return e;
}

std::vector<Measurement> synthetic_records(const HardwareProfile& truth) {
  std::vector<Measurement> out;
  const EngineCosts engine = truth_engine();
  const auto add = [&](Measurement m) {
    m.where = "synthetic[" + std::to_string(out.size()) + "]";
    m.source = "synthetic.json";
    m.median_s = predict_seconds(m, truth, nullptr, &engine);
    out.push_back(m);
  };
  for (std::int64_t tokens :
       {1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096}) {
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{6144, 4096},
                        {4096, 4096},
                        {28672, 8192},
                        {8192, 3584}}) {
      Measurement m;
      m.kind = MeasurementKind::Gemm;
      m.m = tokens;
      m.n = n;
      m.k = k;
      add(m);
    }
  }
  for (std::int64_t batch : {1, 2, 4, 8, 16, 32, 64, 128}) {
    for (std::int64_t context : {32, 256, 1024, 4000}) {
      Measurement m;
      m.kind = MeasurementKind::DecodeAttention;
      m.batch = batch;
      m.context_tokens = context;
      m.num_heads = 32;
      m.num_kv_heads = 4;
      m.head_dim = 128;
      add(m);
      m.kind = MeasurementKind::PrefillAttention;
      m.batch = 1;
      m.chunk_tokens = batch * 32;
      m.context_tokens = context - 32;
      add(m);
    }
  }
  for (std::int64_t ranks : {2, 4, 8}) {
    for (double size : {2048.0, 65536.0, 1048576.0, 67108864.0}) {
      Measurement m;
      m.kind = MeasurementKind::AllReduce;
      m.ranks = ranks;
      m.size_bytes = size;
      add(m);
    }
  }
  for (std::int64_t batch : {1, 8, 64, 128}) {
    Measurement m;
    m.kind = MeasurementKind::HostOverhead;
    m.batch = batch;
    add(m);
  }
  for (double size : {1e6, 1e8, 1e9}) {
    Measurement m;
    m.kind = MeasurementKind::MemcpyD2D;
    m.size_bytes = size;
    add(m);
  }
  return out;
}

void check_same(const KernelCeilings& fitted, const KernelCeilings& truth) {
  CHECK(fitted.compute_efficiency == Approx(truth.compute_efficiency).epsilon(1e-6));
  CHECK(fitted.compute_half_size == Approx(truth.compute_half_size).epsilon(1e-6).margin(1e-6));
  CHECK(fitted.memory_efficiency == Approx(truth.memory_efficiency).epsilon(1e-6));
  CHECK(fitted.memory_half_size == Approx(truth.memory_half_size).epsilon(1e-6).margin(1e-6));
  CHECK(fitted.fixed_s == Approx(truth.fixed_s).epsilon(1e-6).margin(1e-12));
  CHECK(fitted.quantization_weight == Approx(truth.quantization_weight).epsilon(1e-6).margin(1e-9));
}

}  // namespace

TEST_CASE("the fit recovers the parameters that generated the measurements", "[calibration]") {
  const HardwareProfile truth = truth_profile();
  const auto records = synthetic_records(truth);
  const HardwareProfile base = test::shipped_hardware("a100-80gb");
  const HardwareProfile fitted = fit_profile(records, base);
  INFO("gemm");
  check_same(fitted.kernels.gemm, truth.kernels.gemm);
  CHECK(fitted.efficiency.gpu_link == Approx(0.55).epsilon(1e-6));
  CHECK(fitted.overheads.collective_latency_s == Approx(2.5e-5).epsilon(1e-6));
  // host_overhead records are the engine's: fit_host_costs recovers them.
  const EngineHostCosts host = fit_host_costs(records);
  CHECK(host.step_s == Approx(7e-4).epsilon(1e-6));
  CHECK(host.per_sequence_s == Approx(3e-5).epsilon(1e-6));
  CHECK(fitted.efficiency.memory_bandwidth == Approx(0.85).epsilon(1e-6));
  CHECK(fitted.overheads.kernel_launch_s == Approx(4e-6).epsilon(1e-6));
  CHECK(fitted.sources.at("kernels.gemm.compute_efficiency").find("68 gemm records") !=
        std::string::npos);
  // Untouched numbers stay as they were.
  CHECK(fitted.efficiency.host_link == base.efficiency.host_link);
  // The base's per-operator GEMM classes have no records here: the operators follow the
  // refitted "gemm" rather than keep stale ceilings.
  REQUIRE(base.kernels.gemm_operators[static_cast<std::size_t>(GemmOperator::MlpDown)]);
  for (const GemmOperator op : kGemmOperators) {
    CHECK(&fitted.kernels.gemm_for(op) == &fitted.kernels.gemm);
    CHECK_FALSE(fitted.sources.contains("kernels.gemm_" + std::string(gemm_operator_name(op)) +
                                        ".compute_efficiency"));
  }
  // The fitted profile prices the simulator's iterations with the new ceilings and loads back.
  const HardwareProfile again = hardware_from_json(hardware_to_json(fitted), "again");
  check_same(again.kernels.gemm, truth.kernels.gemm);

  // Attention parameters are not all identifiable from these shapes (decode is memory-bound
  // throughout, so its compute side is free): the fit recovers the predictions instead.
  const CalibrationReport report = calibrate(records, base, {"synthetic.json"});
  for (const auto& [name, stats] : report.fit) {
    INFO(name);
    CHECK(stats.mape < (name.ends_with("attention") ? 1e-3 : 1e-9));
  }
  CHECK(report.holdout.at("gemm").mape < 1e-9);
  CHECK(report.method.at("gemm") == "two-fold (even/odd records)");
  CHECK(report.profile.calibration.at("files")[0] == "synthetic.json");
}

TEST_CASE("a fit to impossible ceilings is refused naming the class and a record",
          "[calibration]") {
  const HardwareProfile truth = truth_profile();
  std::vector<Measurement> gemms;
  for (const Measurement& m : synthetic_records(truth)) {
    if (m.kind == MeasurementKind::Gemm) gemms.push_back(m);
  }
  const HardwareProfile base = test::shipped_hardware("a100-80gb");
  // Times a thousand times too short (microseconds read as milliseconds): above the peak.
  auto fast = gemms;
  for (Measurement& m : fast)
    m.median_s /= 1000;
  CHECK_THROWS_WITH(fit_profile(fast, base), Contains("gemm") && Contains("synthetic.json") &&
                                                 Contains("above 1") && Contains("synthetic["));
  // Times that shrink as the work grows: no positive ceiling explains them.
  auto shrinking = gemms;
  for (Measurement& m : shrinking)
    m.median_s = 1.0 / static_cast<double>(m.m * m.n);
  CHECK_THROWS_WITH(fit_profile(shrinking, base),
                    Contains("gemm") && Contains("infinite or negative ceiling"));
}

TEST_CASE("non-negative least squares pins negative coefficients to zero", "[calibration]") {
  // y = 2 x exactly; a constant column would fit negative noise: it is pinned to 0.
  const std::vector<std::vector<double>> rows{{1, 1}, {1, 2}, {1, 4}};
  const auto beta = fit_nonnegative_relative(rows, {1.9, 4.0, 8.1});
  CHECK(beta[0] == 0);
  CHECK(beta[1] == Approx(2.0).epsilon(0.03));
  const auto exact = fit_nonnegative_relative({{1, 1}, {1, 3}}, {3, 7});
  CHECK(exact[0] == Approx(1));
  CHECK(exact[1] == Approx(2));
}

TEST_CASE("GEMM records naming an operator fit that operator's own ceilings", "[calibration]") {
  HardwareProfile truth = test::shipped_hardware("h100-sxm");
  truth.kernels.gemm = {0.7, 120, 0.85, 0, 6e-6};
  truth.kernels.gemm_operators = {};
  KernelCeilings down = truth.kernels.gemm;
  down.compute_efficiency = 0.8;
  down.compute_half_size = 60;
  down.quantization_weight = 0.25;
  truth.kernels.gemm_operators[static_cast<std::size_t>(GemmOperator::MlpDown)] = down;
  std::vector<Measurement> records;
  for (const char* op : {"qkv", "mlp_down"}) {
    for (std::int64_t tokens : {1, 8, 32, 64, 128, 200, 256, 384, 520, 1024, 2048, 4096}) {
      for (const std::int64_t n : {4096, 8192, 14336}) {
        Measurement m;
        m.kind = MeasurementKind::Gemm;
        m.gemm_operator = op;
        m.m = tokens;
        m.n = n;
        m.k = 4096;
        m.where = "synthetic[" + std::to_string(records.size()) + "]";
        m.median_s = predict_seconds(m, truth);
        records.push_back(m);
      }
    }
  }
  HardwareProfile base = test::shipped_hardware("h100-sxm");
  base.kernels.gemm_operators = {};
  const HardwareProfile fitted = fit_profile(records, base);
  const KernelCeilings& fitted_down = fitted.kernels.gemm_for(GemmOperator::MlpDown);
  CHECK(fitted_down.compute_efficiency == Approx(0.8).epsilon(1e-6));
  CHECK(fitted_down.compute_half_size == Approx(60).epsilon(1e-6));
  CHECK(fitted_down.quantization_weight == Approx(0.25).epsilon(1e-6));
  CHECK(fitted.kernels.gemm_for(GemmOperator::Qkv).compute_efficiency == Approx(0.7).epsilon(1e-6));
  CHECK(fitted.sources.at("kernels.gemm_mlp_down.quantization_weight").find("gemm_mlp_down") !=
        std::string::npos);
  CHECK_FALSE(fitted.kernels.gemm_operators[static_cast<std::size_t>(GemmOperator::Out)]);
  for (const Measurement& m : records) {
    INFO(m.where);
    CHECK(predict_seconds(m, fitted) == Approx(m.median_s).epsilon(1e-6));
  }
}

TEST_CASE("a fit landing just above the datasheet is held at the datasheet ceiling",
          "[calibration]") {
  // Streaming kernels (no compute) that take half their time at the peak bandwidth plus 20 us (as
  // if partly served from a cache): no record beats the peak, but the unbounded line would claim
  // twice the peak bandwidth.
  Measurement record;
  record.where = "cached[0]";
  std::vector<CeilingPoint> points;
  for (const double stream_s : {1e-6, 3e-6, 8e-6, 15e-6, 30e-6}) {
    for (const double size : {1.0, 4.0, 16.0}) {
      const double measured_s = 0.5 * stream_s + 20e-6;
      REQUIRE(stream_s < measured_s);
      points.push_back({KernelSample{0, stream_s, size, 0, 0}, measured_s, &record});
    }
  }
  const KernelCeilings start;
  KernelCeilings fitted;
  REQUIRE_NOTHROW(fitted = fit_kernel_ceilings(points, start, "cached"));
  CHECK(fitted.memory_efficiency == 1.0);
  CHECK(fitted.memory_half_size == 0);
  CHECK(fitted.fixed_s > 5e-6);  // the rest of the 20 us goes to the fixed cost
  CHECK(fitted.fixed_s < 20e-6);
  // Without the bound the same data would be refused as above the datasheet.
  for (CeilingPoint& p : points)
    p.measured_s = 0.5 * p.sample.memory_peak_s + 1e-9;
  CHECK_THROWS_WITH(fit_kernel_ceilings(points, start, "cached"), Contains("above 1"));
}
