// fit_engine against a synthetic predictor: no simulation, measured points made from a known
// analytic function of a few engine terms, so that the fit has one right answer to find.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/calibration/engine_fit.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// Engine terms by key path, as the synthetic predictor reads them.
using Terms = std::map<std::string, double>;

const std::vector<std::string> kSyntheticTerms = {
    "host.step_s", "host.per_sequence_s", "kernels.gemm_factor", "kernels.decode_attention_factor"};

// The terms of `base`, with the fit's overrides ("engine.<term>=<value>") over them.
Terms terms_of(const EngineProfile& base, const std::vector<ConfigOverride>& overrides) {
  Terms t;
  for (const std::string& term : kSyntheticTerms)
    t[term] = engine_term(base, term);
  for (const ConfigOverride& o : overrides) {
    INFO(o.assignment);
    REQUIRE(o.assignment.rfind("engine.", 0) == 0);
    const auto equals = o.assignment.find('=');
    REQUIRE(equals != std::string::npos);
    const std::string term = o.assignment.substr(7, equals - 7);
    REQUIRE(t.count(term) == 1);
    t[term] = std::stod(o.assignment.substr(equals + 1));
  }
  return t;
}

// GEMM milliseconds per step of each synthetic model at factor 1.
double gemm_ms(const std::string& model) {
  static const std::map<std::string, double> kGemmMs = {
      {"model-a", 1.5}, {"model-b", 3.0}, {"model-c", 6.0}};
  return kGemmMs.at(model);
}

// The analytic "engine": a point's running sequences are its arrival rate; a step takes the
// host's time per step and per sequence, the GEMMs times the GEMM factor and decode attention
// (growing with the sequences) times its factor. TTFT is a step plus a prompt's GEMMs; E2E
// adds 100 steps; throughput is the sequences over the step time.
ServingMetrics analytic(const ServingPoint& p, const Terms& t) {
  const double n = std::get<LoadStage>(p.workload).rate_per_s;
  const double w = gemm_ms(p.model);
  const double itl_ms = 1000 * (t.at("host.step_s") + t.at("host.per_sequence_s") * n) +
                        w * t.at("kernels.gemm_factor") +
                        0.25 * w * (n / 32) * t.at("kernels.decode_attention_factor");
  const double ttft_ms = 1000 * t.at("host.step_s") + 4 * w * t.at("kernels.gemm_factor");
  ServingMetrics m;
  m[ServingMetric::TtftMs] = ttft_ms;
  m[ServingMetric::ItlMs] = itl_ms;
  m[ServingMetric::E2eMs] = ttft_ms + 100 * itl_ms;
  m[ServingMetric::OutputTokensPerS] = n * 1000 / itl_ms;
  m[ServingMetric::CompletedShare] = 1.0;
  return m;
}

ServingPoint point(const std::string& model, double rate_per_s, std::size_t row) {
  ServingPoint p;
  p.source = "synthetic.csv";
  p.row = row;
  p.model_name = model;
  p.model = model;
  p.hardware = "h100-sxm";
  p.engine = "vllm";
  LoadStage s;
  s.workload = "w";
  s.rate_per_s = rate_per_s;
  s.duration_s = 60;
  s.requests_sent = static_cast<std::int64_t>(rate_per_s * 60);
  s.requests_completed = s.requests_sent;
  p.workload = s;
  return p;
}

// Every model at three loads, measured from `truth`; with `extras`, also a point measured
// overloaded (its figures ten times the truth's: a fit that counted it would go wrong) and
// a point whose model is not shipped.
std::vector<ServingRun> measured_runs(const std::vector<std::string>& models, const Terms& truth,
                                      bool extras) {
  std::vector<ServingRun> runs;
  std::size_t row = 0;
  for (const std::string& model : models) {
    for (const double rate : {8.0, 32.0, 128.0}) {
      ServingPoint p = point(model, rate, ++row);
      p.measured = analytic(p, truth);
      runs.push_back({{p}});
    }
  }
  if (extras) {
    ServingPoint overloaded = point(models.front(), 512, ++row);
    overloaded.measured = analytic(overloaded, truth);
    for (auto& value : overloaded.measured.values) {
      if (value) *value *= 10;
    }
    overloaded.measured.overloaded = true;
    runs.push_back({{overloaded}});
  }
  return runs;
}

// Predicts with the analytic engine at the base's terms under the fit's overrides; counts
// its calls.
EngineTermsPredictor synthetic_predictor(const EngineProfile& base, int& calls) {
  return [&base, &calls](const std::vector<ServingRun>& runs,
                         const std::vector<ConfigOverride>& overrides) {
    ++calls;
    const Terms t = terms_of(base, overrides);
    return validate_serving(runs, [&](const ServingRun& run) {
      std::vector<ServingMetrics> out;
      for (const ServingPoint& p : run.points)
        out.push_back(analytic(p, t));
      return out;
    });
  };
}

const RelativeErrorStats& stats_of(const ServingValidation& v, ServingMetric metric) {
  for (const auto& [m, s] : v.metrics) {
    if (m == metric) return s;
  }
  FAIL("no statistics for " << serving_metric_name(metric));
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("fit_engine recovers the engine terms the measured points were made from",
          "[engine_fit]") {
  const EngineProfile base = test::shipped_engine("vllm");
  Terms truth = terms_of(base, {});
  truth["host.step_s"] = 1.2e-3;
  truth["host.per_sequence_s"] = 2e-5;
  truth["kernels.gemm_factor"] = 1.25;
  const auto runs = measured_runs({"model-a", "model-b", "model-c"}, truth, true);
  EngineFitOptions options;
  options.terms = {"host.step_s", "host.per_sequence_s", "kernels.gemm_factor"};
  options.max_evaluations = 400;
  int calls = 0;
  const EngineFitReport report =
      fit_engine(runs, base, synthetic_predictor(base, calls), options, {"synthetic.csv"});

  for (const std::string& term : options.terms) {
    INFO(term);
    REQUIRE(report.terms.count(term) == 1);
    CHECK(report.terms.at(term) == Approx(truth.at(term)).epsilon(0.01));
    CHECK(engine_term(report.engine, term) == report.terms.at(term));
  }
  // The terms not fitted stay the base's.
  CHECK(engine_term(report.engine, "kernels.decode_attention_factor") ==
        engine_term(base, "kernels.decode_attention_factor"));
  CHECK(report.engine.costs.host.overlaps_device == base.costs.host.overlaps_device);
  CHECK(report.engine.name == base.name);
  // One full fit and one per model (three folds), then one prediction for each.
  CHECK(report.evaluations > 0);
  CHECK(report.evaluations <= 4 * options.max_evaluations);
  CHECK(calls == report.evaluations + 1 + 3);

  // In sample: every point, the overloaded one reported as such.
  const ServingValidation& fitted = report.fitted;
  CHECK(fitted.points.size() == 10);
  CHECK(fitted.not_predicted == 0);
  CHECK(fitted.measured_overloaded == 1);
  for (const ServingMetric metric : {ServingMetric::TtftMs, ServingMetric::ItlMs,
                                     ServingMetric::E2eMs, ServingMetric::OutputTokensPerS}) {
    INFO(serving_metric_name(metric));
    const RelativeErrorStats& s = stats_of(fitted, metric);
    CHECK(s.count == 9);
    CHECK(s.mape < 2e-3);
    CHECK(s.max_ape < 5e-3);
  }

  // Leave one model out: every served point predicted by a fold that did not see its model.
  const ServingValidation& held = report.held_out;
  CHECK(held.points.size() == 10);
  CHECK(held.not_predicted == 0);
  for (const PointComparison& c : held.points) {
    INFO(c.point.where());
    CHECK(c.predicted());
    CHECK_FALSE(c.metrics.empty());
    for (const MetricComparison& m : c.metrics)
      CHECK(m.predicted.has_value());
  }
  // The analytic engine is exact, so two models pin the terms down as well as three.
  CHECK(stats_of(held, ServingMetric::ItlMs).count == 9);
  CHECK(stats_of(held, ServingMetric::ItlMs).mape < 0.01);

  // The written engine: each fitted term's source, and what the fit was made on.
  for (const std::string& term : options.terms) {
    INFO(term);
    REQUIRE(report.engine.sources.count(term) == 1);
    CHECK_THAT(
        report.engine.sources.at(term),
        Contains("fitted by servesim calibrate --measured") && Contains("10 measured points"));
  }
  CHECK(report.engine.sources.at("kernels.all_reduce_latency_s") ==
        base.sources.at("kernels.all_reduce_latency_s"));
  const nlohmann::json& calibration = report.engine.calibration;
  REQUIRE(calibration.is_object());
  CHECK(calibration.at("files") == nlohmann::json::array({"synthetic.csv"}));
  CHECK(calibration.at("points") == 10);
  CHECK(calibration.at("base_engine") == "vllm");
  CHECK(calibration.at("terms") == nlohmann::json(options.terms));
  const nlohmann::json& itl = calibration.at("residuals").at("itl_ms_mean");
  CHECK(itl.at("count") == 9);
  CHECK(itl.at("mape").get<double>() < 2e-3);
  CHECK(calibration.at("leave_one_model_out").at("ttft_ms_mean").at("count") == 9);
  // What is written loads back as it was.
  const EngineProfile reloaded = engine_from_json(engine_to_json(report.engine), "fitted.json");
  CHECK(reloaded.costs.host.step_s == report.engine.costs.host.step_s);
  CHECK(reloaded.calibration == calibration);

  // Deterministic: the same fit again gives the same terms.
  int again_calls = 0;
  const EngineFitReport again =
      fit_engine(runs, base, synthetic_predictor(base, again_calls), options, {"synthetic.csv"});
  CHECK(again.terms == report.terms);
  CHECK(again_calls == calls);
}

TEST_CASE("fit_engine holds each term within its range", "[engine_fit]") {
  const EngineProfile base = test::shipped_engine("vllm");
  const std::vector<std::string> models = {"model-a", "model-b"};
  EngineFitOptions options;
  options.max_evaluations = 60;

  SECTION("a GEMM factor above 3 gives 3") {
    Terms truth = terms_of(base, {});
    truth["kernels.gemm_factor"] = 5.0;
    options.terms = {"kernels.gemm_factor"};
    int calls = 0;
    const auto report = fit_engine(measured_runs(models, truth, false), base,
                                   synthetic_predictor(base, calls), options, {"s.csv"});
    CHECK(report.terms.at("kernels.gemm_factor") == Approx(3.0).epsilon(1e-12));
    CHECK(report.engine.costs.kernels.gemm == Approx(3.0).epsilon(1e-12));
  }
  SECTION("a decode-attention factor below 0.8 gives 0.8") {
    Terms truth = terms_of(base, {});
    truth["kernels.decode_attention_factor"] = 0.3;
    options.terms = {"kernels.decode_attention_factor"};
    int calls = 0;
    const auto report = fit_engine(measured_runs(models, truth, false), base,
                                   synthetic_predictor(base, calls), options, {"s.csv"});
    CHECK(report.terms.at("kernels.decode_attention_factor") == Approx(0.8).epsilon(1e-12));
  }
  SECTION("a host time per step over 50 ms gives 50 ms") {
    Terms truth = terms_of(base, {});
    truth["host.step_s"] = 0.2;
    options.terms = {"host.step_s"};
    int calls = 0;
    const auto report = fit_engine(measured_runs(models, truth, false), base,
                                   synthetic_predictor(base, calls), options, {"s.csv"});
    CHECK(report.terms.at("host.step_s") == Approx(0.05).epsilon(1e-12));
  }
}

TEST_CASE("fit_engine with one model fits it but holds nothing out", "[engine_fit]") {
  const EngineProfile base = test::shipped_engine("vllm");
  Terms truth = terms_of(base, {});
  truth["kernels.gemm_factor"] = 1.4;
  EngineFitOptions options;
  options.terms = {"kernels.gemm_factor"};
  int calls = 0;
  const auto report = fit_engine(measured_runs({"model-b"}, truth, false), base,
                                 synthetic_predictor(base, calls), options, {"s.csv"});
  CHECK(report.terms.at("kernels.gemm_factor") == Approx(1.4).epsilon(0.01));
  CHECK(report.fitted.points.size() == 3);
  CHECK(report.held_out.points.empty());
  CHECK(calls == report.evaluations + 1);  // no folds
}

TEST_CASE("fit_engine refuses unknown terms and having nothing to fit", "[engine_fit]") {
  const EngineProfile base = test::shipped_engine("vllm");
  CHECK(engine_term(base, "host.step_s") == base.costs.host.step_s);
  CHECK(engine_term(base, "kernels.gemm_factor") == base.costs.kernels.gemm);
  CHECK_THROWS_AS(engine_term(base, "kernels.nope"), InputError);
  CHECK_THROWS_WITH(engine_term(base, "kernels.nope"),
                    Contains("unknown engine term") && Contains("kernels.nope"));
  CHECK_THROWS_WITH(engine_term(base, "host"), Contains("not a number"));
  CHECK_THROWS_WITH(engine_term(base, "kernels.attention_backend"), Contains("not a number"));

  const auto runs = measured_runs({"model-a", "model-b"}, terms_of(base, {}), false);
  EngineFitOptions options;
  options.terms = {"host.step_s", "kernels.nope"};
  int calls = 0;
  CHECK_THROWS_AS(fit_engine(runs, base, synthetic_predictor(base, calls), options, {"s.csv"}),
                  InputError);
  CHECK(calls == 0);  // refused before anything is predicted
  // A number of the engine that the run configuration does not take from a fit.
  options.terms = {"scheduling.block_size"};
  CHECK_THROWS_WITH(fit_engine(runs, base, synthetic_predictor(base, calls), options, {"s.csv"}),
                    Contains("--terms") && Contains("not a term a fit sets"));
  CHECK(calls == 0);

  // TensorRT-LLM's CUDA-core decode attention terms are fitted; the XQA group size is a rule.
  CHECK(is_fittable_term("kernels.decode_attention_core_efficiency"));
  CHECK(is_fittable_term("kernels.decode_attention_core_sequence_keys"));
  CHECK_FALSE(is_fittable_term("kernels.decode_attention_tensor_core_min_group"));

  options.terms = {"host.step_s"};
  CHECK_THROWS_WITH(fit_engine({}, base, synthetic_predictor(base, calls), options, {"s.csv"}),
                    Contains("no measured point to fit"));
  CHECK(calls == 0);
}

TEST_CASE("fit_engine fits a load stage's latencies, not its throughput", "[engine_fit]") {
  // The throughputs measured are off by 2x (a stage's throughput follows its arrivals, and a
  // prefix of it is biased): were they fitted, the terms would move off the truth.
  const EngineProfile base = test::shipped_engine("vllm");
  Terms truth = terms_of(base, {});
  truth["host.step_s"] = 1.2e-3;
  truth["kernels.gemm_factor"] = 1.25;
  auto runs = measured_runs({"model-a", "model-b", "model-c"}, truth, false);
  for (ServingRun& run : runs) {
    for (ServingPoint& p : run.points)
      *p.measured[ServingMetric::OutputTokensPerS] *= 2;
  }
  EngineFitOptions options;
  options.terms = {"host.step_s", "kernels.gemm_factor"};
  options.max_evaluations = 300;
  int calls = 0;
  const EngineFitReport report =
      fit_engine(runs, base, synthetic_predictor(base, calls), options, {"synthetic.csv"});
  for (const std::string& term : options.terms) {
    INFO(term);
    CHECK(report.terms.at(term) == Approx(truth.at(term)).epsilon(0.01));
  }
  CHECK(stats_of(report.fitted, ServingMetric::ItlMs).mape < 2e-3);
  CHECK(stats_of(report.fitted, ServingMetric::OutputTokensPerS).mape == Approx(0.5).epsilon(0.01));
}
