// Hardware terms of a serving fit (hardware_terms.h) and fit_engine fitting them, held out by
// TP degree: against a synthetic predictor whose step time is a known function of a hardware
// profile's GEMM ceilings, so that the fit has one right answer to find.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "sim/calibration/engine_fit.h"
#include "sim/calibration/hardware_terms.h"
#include "sim/core/error.h"
#include "sim/hardware/hardware_profile.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("hardware terms: which, their ranges, reading and setting them", "[hardware_fit]") {
  CHECK(is_hardware_term("hardware.kernels.gemm.fixed_s"));
  CHECK(is_hardware_term("hardware.kernels.gemm_mlp_up.memory_efficiency"));
  CHECK(is_hardware_term("hardware.kernels.decode_attention_fp8_kv.memory_efficiency"));
  CHECK(is_hardware_term("hardware.overheads.collective_latency_s"));
  CHECK_FALSE(is_hardware_term("kernels.gemm.fixed_s"));            // no prefix: an engine path
  CHECK_FALSE(is_hardware_term("hardware.kernels.gemm.tile_m"));    // a rule, not a ceiling
  CHECK_FALSE(is_hardware_term("hardware.memory_capacity_bytes"));  // a datasheet figure
  CHECK(hardware_term_range("hardware.kernels.gemm.compute_efficiency") ==
        std::pair<double, double>{0.05, 1.0});
  CHECK(hardware_term_range("hardware.kernels.gemm.fixed_s") ==
        std::pair<double, double>{1e-7, 1e-4});
  CHECK(hardware_term_range("hardware.overheads.collective_latency_s") ==
        std::pair<double, double>{1e-6, 1e-4});

  const nlohmann::json h100 = hardware_to_json(test::shipped_hardware("h100-sxm"));
  CHECK(hardware_term(h100, "hardware.kernels.gemm.fixed_s") ==
        h100.at("kernels").at("gemm").at("fixed_s").get<double>());
  // A class the profile lacks reads as the one it refines.
  REQUIRE_FALSE(h100.at("kernels").contains("decode_attention_fp8_kv"));
  CHECK(hardware_term(h100, "hardware.kernels.decode_attention_fp8_kv.memory_efficiency") ==
        h100.at("kernels").at("decode_attention").at("memory_efficiency").get<double>());
  CHECK_THROWS_WITH(hardware_term(h100, "hardware.kernels.gemm_qkvx.fixed_s"),
                    Contains("no number at \"kernels.gemm_qkvx.fixed_s\""));

  const nlohmann::json set = hardware_with_terms(
      h100, {{"hardware.kernels.gemm.memory_efficiency", 0.5},
             {"hardware.kernels.decode_attention_fp8_kv.memory_efficiency", 0.4}});
  const HardwareProfile p = hardware_from_json(set, "set.json");
  CHECK(p.kernels.gemm.memory_efficiency == 0.5);
  CHECK(p.kernels.gemm.compute_efficiency ==
        test::shipped_hardware("h100-sxm").kernels.gemm.compute_efficiency);
  REQUIRE(p.kernels.decode_attention_fp8_kv.has_value());
  CHECK(p.kernels.decode_attention_fp8_kv->memory_efficiency == 0.4);
  // The rest of the FP8-KV class is the 16-bit one's.
  CHECK(p.kernels.decode_attention_fp8_kv->fixed_s == p.kernels.decode_attention.fixed_s);
  CHECK(&p.kernels.decode_attention_for(DType::FP8) == &*p.kernels.decode_attention_fp8_kv);
  CHECK(&p.kernels.decode_attention_for(DType::BF16) == &p.kernels.decode_attention);

  // The MLA and windowed classes refine decode_attention the same way, and MLA's wins over the
  // KV format's for an MLA model; the round trip through JSON keeps them.
  CHECK(is_hardware_term("hardware.kernels.decode_attention_mla.compute_efficiency"));
  CHECK(is_hardware_term("hardware.kernels.decode_attention_window.fixed_s"));
  const HardwareProfile refined = hardware_from_json(
      hardware_with_terms(set, {{"hardware.kernels.decode_attention_mla.compute_efficiency", 0.3},
                                {"hardware.kernels.decode_attention_window.fixed_s", 5e-6}}),
      "refined.json");
  REQUIRE(refined.kernels.decode_attention_mla.has_value());
  REQUIRE(refined.kernels.decode_attention_window.has_value());
  CHECK(refined.kernels.decode_attention_mla->compute_efficiency == 0.3);
  CHECK(refined.kernels.decode_attention_mla->memory_efficiency ==
        refined.kernels.decode_attention.memory_efficiency);
  CHECK(refined.kernels.decode_attention_window->fixed_s == 5e-6);
  CHECK(&refined.kernels.decode_attention_for(DType::FP8, true) ==
        &*refined.kernels.decode_attention_mla);
  CHECK(&refined.kernels.decode_attention_for(DType::FP8, false) ==
        &*refined.kernels.decode_attention_fp8_kv);
  const HardwareProfile again = hardware_from_json(hardware_to_json(refined), "again.json");
  CHECK(again.kernels.decode_attention_window->fixed_s == 5e-6);
  CHECK(again.kernels.decode_attention_mla->compute_efficiency == 0.3);

  const SplitAssignments split = split_hardware_assignments(
      {{"f", hardware_term_assignment("hardware.kernels.gemm.fixed_s", 3.25e-6)},
       {"f", "engine.host.step_s=1"},
       {"f", "hardware=x.json"}});
  CHECK(split.hardware_terms ==
        std::map<std::string, double>{{"hardware.kernels.gemm.fixed_s", 3.25e-6}});
  REQUIRE(split.others.size() == 2);
  CHECK(split.others[0].assignment == "engine.host.step_s=1");
  CHECK(split.others[1].assignment == "hardware=x.json");
}

namespace {

// A step of the synthetic deployment: its weights streamed at the GEMM memory ceiling (1 GB
// per GPU at TP 1, halved per TP degree doubling) plus 320 GEMM launches at the fixed cost.
// TTFT: a prompt's 2e12 FLOPs over TP GPUs at the compute ceiling of a 1 PFLOP/s peak.
ServingMetrics synthetic(const ServingPoint& p, const std::map<std::string, double>& hw) {
  const double tp = static_cast<double>(p.tp);
  const auto users = static_cast<double>(p.tp + static_cast<std::int64_t>(p.row));  // loads differ
  const double step_s =
      1e9 / tp / (8e12 * hw.at("memory")) * (1 + 0.01 * users) + 320 * hw.at("fixed");
  ServingMetrics m;
  m[ServingMetric::TpotMs] = 1000 * step_s;
  m[ServingMetric::TtftMs] = 1000 * (2e12 / tp / (1e15 * hw.at("compute")) + step_s);
  m[ServingMetric::CompletedShare] = 1.0;
  return m;
}

const std::map<std::string, std::string> kShort = {
    {"hardware.kernels.gemm.memory_efficiency", "memory"},
    {"hardware.kernels.gemm.compute_efficiency", "compute"},
    {"hardware.kernels.gemm.fixed_s", "fixed"}};

std::map<std::string, double> hardware_of(const nlohmann::json& base,
                                          const std::vector<ConfigOverride>& overrides) {
  std::map<std::string, double> hw;
  for (const auto& [term, name] : kShort)
    hw[name] = hardware_term(base, term);
  const SplitAssignments split = split_hardware_assignments(overrides);
  CHECK(split.others.empty());  // hardware terms only: no engine override
  for (const auto& [term, value] : split.hardware_terms)
    hw[kShort.at(term)] = value;
  return hw;
}

}  // namespace

TEST_CASE("fit_engine fits hardware terms and holds out one TP degree at a time",
          "[hardware_fit]") {
  const nlohmann::json base = hardware_to_json(test::shipped_hardware("b200"));
  const std::map<std::string, double> truth = {
      {"memory", 0.62}, {"compute", 0.48}, {"fixed", 3.5e-6}};
  std::vector<ServingRun> runs;
  std::size_t row = 0;
  for (const std::int64_t tp : {1, 2, 4}) {
    for (int k = 0; k < 3; ++k) {
      ServingPoint p;
      p.source = "synthetic.csv";
      p.row = ++row;
      p.model = p.model_name = "llama-3.3-70b";
      p.hardware = "b200";
      p.tp = tp;
      p.engine = "trtllm-1.1";
      ClosedLoopRequests loop;
      loop.concurrency = 4;
      p.workload = loop;
      p.measured = synthetic(p, truth);
      runs.push_back({{p}});
    }
  }
  EngineFitOptions options;
  options.terms = {"hardware.kernels.gemm.memory_efficiency",
                   "hardware.kernels.gemm.compute_efficiency", "hardware.kernels.gemm.fixed_s"};
  options.hold_out = HoldOut::Tp;
  options.hardware_base = base;
  options.selection = {"hardware=b200"};
  options.max_evaluations = 400;
  int calls = 0;
  const EngineTermsPredictor predict = [&](const std::vector<ServingRun>& rs,
                                           const std::vector<ConfigOverride>& overrides) {
    ++calls;
    const auto hw = hardware_of(base, overrides);
    return validate_serving(rs, [&](const ServingRun& run) {
      std::vector<ServingMetrics> out;
      for (const ServingPoint& p : run.points)
        out.push_back(synthetic(p, hw));
      return out;
    });
  };
  const EngineFitReport report =
      fit_engine(runs, EngineProfile{}, predict, options, {"synthetic.csv"});

  for (const auto& [term, name] : kShort) {
    INFO(term);
    CHECK(report.terms.at(term) == Approx(truth.at(name)).epsilon(0.01));
  }
  // Three TP degrees: a full fit and three folds, each predicting its held-out degree.
  CHECK(calls == report.evaluations + 1 + 3);
  CHECK(report.held_out.points.size() == 9);
  CHECK(report.held_out.metrics.size() >= 2);
  for (const auto& [metric, s] : report.held_out.metrics) {
    if (s.count > 0) CHECK(s.mape < 0.02);
  }
  // The fitted profile: the base with the terms, their sources and the fit's record, which
  // loads as a hardware profile; no engine was fitted.
  REQUIRE(report.hardware.is_object());
  const HardwareProfile fitted = hardware_from_json(report.hardware, "fitted.json");
  CHECK(fitted.kernels.gemm.memory_efficiency ==
        report.terms.at("hardware.kernels.gemm.memory_efficiency"));
  CHECK(fitted.kernels.gemm.fixed_s == report.terms.at("hardware.kernels.gemm.fixed_s"));
  CHECK(fitted.memory_bandwidth_bytes_per_s ==
        test::shipped_hardware("b200").memory_bandwidth_bytes_per_s);
  CHECK_THAT(fitted.sources.at("kernels.gemm.fixed_s"),
             Contains("fitted by servesim calibrate --measured") && Contains("9 measured points"));
  const nlohmann::json& record = fitted.calibration.at("serving_fit");
  CHECK(record.at("selected") == nlohmann::json::array({"hardware=b200"}));
  CHECK(record.at("leave_one_tp_out").at("tpot_ms_mean").at("count") == 9);
  CHECK_FALSE(record.contains("base_engine"));
  CHECK(report.engine.calibration.is_null());

  // Without the profile to start from, a hardware term is refused before anything runs.
  options.hardware_base = nullptr;
  calls = 0;
  CHECK_THROWS_WITH(fit_engine(runs, EngineProfile{}, predict, options, {"s.csv"}),
                    Contains("is a hardware term"));
  CHECK(calls == 0);
  CHECK(hold_out_from_name("tp") == HoldOut::Tp);
  CHECK(hold_out_from_name("hardware") == HoldOut::Hardware);
  CHECK_FALSE(hold_out_from_name("gpu").has_value());
  CHECK(hold_out_name(HoldOut::Engine) == "engine");
}
