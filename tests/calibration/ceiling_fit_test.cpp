#include <catch2/catch.hpp>

#include "sim/calibration/calibrate.h"
#include "sim/calibration/ceiling_fit.h"
#include "sim/calibration/prediction.h"
#include "sim/core/error.h"
#include "tests/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A profile with known parameters, different from the base the fit starts from.
HardwareProfile truth_profile() {
  HardwareProfile p = test::shipped_hardware("a100-80gb");
  p.kernels.gemm = {0.72, 90, 0.81, 3, 5e-6};
  p.kernels.decode_attention = {0.45, 0, 0.78, 1.5, 9e-6};
  p.kernels.prefill_attention = {0.4, 200, 0.6, 0, 4e-6};
  p.efficiency.gpu_link = 0.55;
  p.overheads.collective_latency_s = 2.5e-5;
  p.overheads.iteration_s = 7e-4;
  p.overheads.per_sequence_s = 3e-5;
  p.efficiency.memory_bandwidth = 0.85;
  p.overheads.kernel_launch_s = 4e-6;
  return p;
}

std::vector<Measurement> synthetic_records(const HardwareProfile& truth) {
  std::vector<Measurement> out;
  const auto add = [&](Measurement m) {
    m.where = "synthetic[" + std::to_string(out.size()) + "]";
    m.source = "synthetic.json";
    m.median_s = predict_seconds(m, truth);
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
  CHECK(fitted.overheads.iteration_s == Approx(7e-4).epsilon(1e-6));
  CHECK(fitted.overheads.per_sequence_s == Approx(3e-5).epsilon(1e-6));
  CHECK(fitted.efficiency.memory_bandwidth == Approx(0.85).epsilon(1e-6));
  CHECK(fitted.overheads.kernel_launch_s == Approx(4e-6).epsilon(1e-6));
  CHECK(fitted.sources.at("kernels.gemm.compute_efficiency").find("68 gemm records") !=
        std::string::npos);
  // Untouched numbers stay as they were.
  CHECK(fitted.efficiency.host_link == base.efficiency.host_link);
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
