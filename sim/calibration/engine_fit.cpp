#include "sim/calibration/engine_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <set>

#include "sim/core/error.h"

namespace servesim {
namespace {

// A point that could not be served counts as a log error of 5 on each metric (e^5 = 150x).
constexpr double kUnservedPenalty = 25;
// Where a fit starts a term the base leaves at zero or unset (a logarithm needs a value).
constexpr double kStartOfUnsetTerm = 1e-5;

nlohmann::json::json_pointer pointer_of(const std::string& term) {
  std::string path = "/" + term;
  std::replace(path.begin(), path.end(), '.', '/');
  return nlohmann::json::json_pointer(path);
}

// Whether a metric is fitted: the mean latencies (TTFT, ITL, TPOT, E2E) where a point measured
// them, its throughput only where it measured no latency (static batches, bursts). A load
// stage's throughput follows its arrivals, and a prefix of the stage (--max-requests-per-point)
// would bias it.
bool fitted_metric(const PointComparison& c, ServingMetric metric) {
  const auto is_latency = [](ServingMetric m) {
    return m == ServingMetric::TtftMs || m == ServingMetric::ItlMs || m == ServingMetric::TpotMs ||
           m == ServingMetric::E2eMs;
  };
  if (metric == ServingMetric::CompletedShare) return false;
  if (is_latency(metric)) return true;
  return std::none_of(c.metrics.begin(), c.metrics.end(),
                      [&](const MetricComparison& m) { return is_latency(m.metric); });
}

double loss(const ServingValidation& v) {
  double sum = 0;
  for (const PointComparison& c : v.points) {
    if (c.measured_overloaded()) continue;
    for (const MetricComparison& m : c.metrics) {
      if (!fitted_metric(c, m.metric)) continue;
      if (!c.predicted() || !m.predicted || *m.predicted <= 0) {
        sum += kUnservedPenalty;
        continue;
      }
      const double r = std::log(*m.predicted / m.measured);
      sum += r * r;
    }
  }
  return sum;
}

// The range a term may take. A GEMM factor below 0.9 would have GEMMs beat the hardware
// profile's fitted ceilings by more than a tenth (at the datasheet's bandwidth already), so
// a fit that wants one is compensating for something else; host times stay under 50 ms per
// step and 1 ms per request, all-reduces between 2 and 100 us.
std::pair<double, double> range_of(const std::string& term) {
  if (is_hardware_term(term)) return hardware_term_range(term);
  // Decode attention at 0.8 reaches 0.96 of the datasheet bandwidth with the shipped profiles'
  // 0.77; prefill attention at 0.5 reaches 1.0 of the peak with their 0.5 (FlashAttention-3
  // reaches about 0.75).
  if (term == "kernels.decode_attention_factor") return {0.8, 3.0};
  if (term == "kernels.prefill_attention_factor") return {0.5, 3.0};
  if (term.ends_with("_factor")) return {0.9, 3.0};
  if (term == "kernels.all_reduce_latency_s") return {2e-6, 1e-4};
  if (term == "host.per_sequence_s" || term == "host.per_token_s") return {1e-8, 1e-3};
  if (term == "host.frontend_latency_s") return {1e-5, 0.1};
  // CUDA-core decode attention: 1% to all of the fp32 peak; fixed work of 1 to 10,000 keys.
  if (term == "kernels.decode_attention_core_efficiency") return {0.01, 1.0};
  if (term == "kernels.decode_attention_core_sequence_keys") return {1.0, 1e4};
  return {1e-7, 0.05};
}

double value_of(const std::string& term, double log_value) {
  const auto [low, high] = range_of(term);
  return std::clamp(std::exp(log_value), low, high);
}

std::vector<ConfigOverride> overrides_of(const std::vector<std::string>& terms,
                                         const std::vector<double>& log_values) {
  std::vector<ConfigOverride> out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const double value = value_of(terms[i], log_values[i]);
    out.push_back({"calibration", is_hardware_term(terms[i])
                                      ? hardware_term_assignment(terms[i], value)
                                      : "engine." + terms[i] + "=" + nlohmann::json(value).dump()});
  }
  return out;
}

// Nelder-Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2) from `start`, with a
// first simplex of steps `step` along each axis; deterministic.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> start, double step, int max_evaluations,
                                int& evaluations) {
  const std::size_t n = start.size();
  std::vector<std::vector<double>> simplex{start};
  for (std::size_t i = 0; i < n; ++i) {
    simplex.push_back(start);
    simplex.back()[i] += step;
  }
  std::vector<double> values;
  for (const auto& x : simplex) {
    values.push_back(f(x));
    ++evaluations;
  }
  int used = static_cast<int>(simplex.size());
  while (used < max_evaluations) {
    std::vector<std::size_t> order(simplex.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return values[a] < values[b] || (values[a] == values[b] && a < b);
    });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (values[worst] - values[best] < 1e-6 * (1 + std::abs(values[best]))) break;
    std::vector<double> centroid(n, 0);
    for (std::size_t k : order) {
      if (k == worst) continue;
      for (std::size_t i = 0; i < n; ++i)
        centroid[i] += simplex[k][i] / static_cast<double>(n);
    }
    const auto along = [&](double t) {
      std::vector<double> x(n);
      for (std::size_t i = 0; i < n; ++i)
        x[i] = centroid[i] + t * (simplex[worst][i] - centroid[i]);
      return x;
    };
    const auto evaluate = [&](const std::vector<double>& x) {
      ++used;
      ++evaluations;
      return f(x);
    };
    const auto reflected = along(-1);
    const double fr = evaluate(reflected);
    if (fr < values[best]) {
      const auto expanded = along(-2);
      const double fe = evaluate(expanded);
      if (fe < fr) {
        simplex[worst] = expanded, values[worst] = fe;
      } else {
        simplex[worst] = reflected, values[worst] = fr;
      }
    } else if (fr < values[second]) {
      simplex[worst] = reflected, values[worst] = fr;
    } else {
      const auto contracted = along(fr < values[worst] ? -0.5 : 0.5);
      const double fc = evaluate(contracted);
      if (fc < std::min(fr, values[worst])) {
        simplex[worst] = contracted, values[worst] = fc;
      } else {
        for (std::size_t k = 0; k < simplex.size(); ++k) {
          if (k == best) continue;
          for (std::size_t i = 0; i < n; ++i)
            simplex[k][i] = simplex[best][i] + 0.5 * (simplex[k][i] - simplex[best][i]);
          values[k] = evaluate(simplex[k]);
        }
      }
    }
  }
  const auto best = std::min_element(values.begin(), values.end()) - values.begin();
  return simplex[static_cast<std::size_t>(best)];
}

struct Fit {
  std::vector<double> log_values;
  int evaluations = 0;
};

Fit fit_terms(const std::vector<ServingRun>& runs, const std::vector<double>& start,
              const EngineTermsPredictor& predict, const EngineFitOptions& options) {
  Fit fit;
  fit.log_values = nelder_mead(
      [&](const std::vector<double>& x) {
        return loss(predict(runs, overrides_of(options.terms, x)));
      },
      start, std::log(2.0), options.max_evaluations, fit.evaluations);
  return fit;
}

std::string group_of(const ServingRun& run, HoldOut hold_out) {
  const ServingPoint& p = run.points.front();
  switch (hold_out) {
    case HoldOut::Model:
      return p.model;
    case HoldOut::Tp:
      return std::to_string(p.tp);
    case HoldOut::Hardware:
      return p.hardware;
    case HoldOut::Engine:
      return p.engine.value_or("");
  }
  return p.model;
}

constexpr std::array<std::pair<HoldOut, std::string_view>, 4> kHoldOutNames = {
    {{HoldOut::Model, "model"},
     {HoldOut::Tp, "tp"},
     {HoldOut::Hardware, "hardware"},
     {HoldOut::Engine, "engine"}}};

}  // namespace

std::optional<HoldOut> hold_out_from_name(std::string_view name) {
  for (const auto& [h, n] : kHoldOutNames) {
    if (n == name) return h;
  }
  return std::nullopt;
}

std::string_view hold_out_name(HoldOut h) noexcept {
  for (const auto& [held, n] : kHoldOutNames) {
    if (held == h) return n;
  }
  return "model";
}

bool is_fittable_term(const std::string& term) {
  if (is_hardware_term(term)) return true;
  static const std::set<std::string> kTerms = {"host.schedule_s",
                                               "host.step_s",
                                               "host.per_sequence_s",
                                               "host.per_token_s",
                                               "host.kernel_launch_s",
                                               "host.frontend_latency_s",
                                               "kernels.gemm_factor",
                                               "kernels.gemm_memory_factor",
                                               "kernels.decode_attention_factor",
                                               "kernels.prefill_attention_factor",
                                               "kernels.all_reduce_latency_s",
                                               "kernels.decode_attention_core_efficiency",
                                               "kernels.decode_attention_core_sequence_keys"};
  return kTerms.count(term) != 0;
}

double engine_term(const EngineProfile& engine, const std::string& term) {
  const nlohmann::json j = engine_to_json(engine);
  const auto pointer = pointer_of(term);
  if (!j.contains(pointer)) throw InputError("calibrate", "unknown engine term \"" + term + "\"");
  const nlohmann::json& value = j.at(pointer);
  // Unset, the GEMMs' memory factor is the GEMM factor.
  if (value.is_null() && term == "kernels.gemm_memory_factor") return engine.costs.kernels.gemm;
  if (value.is_null()) return 0;
  if (!value.is_number())
    throw InputError("calibrate", "engine term \"" + term + "\" is not a number");
  return value.get<double>();
}

EngineFitReport fit_engine(const std::vector<ServingRun>& runs, const EngineProfile& base,
                           const EngineTermsPredictor& predict, const EngineFitOptions& options,
                           const std::vector<std::string>& files) {
  std::vector<double> start;
  for (const std::string& term : options.terms) {
    if (!is_fittable_term(term)) {
      throw InputError("--terms", "\"" + term +
                                      "\" is not a term a fit sets (host.schedule_s, host.step_s, "
                                      "host.per_sequence_s, host.per_token_s, "
                                      "host.kernel_launch_s, host.frontend_latency_s, "
                                      "kernels.*_factor, "
                                      "kernels.all_reduce_latency_s, "
                                      "kernels.decode_attention_core_efficiency, "
                                      "kernels.decode_attention_core_sequence_keys, "
                                      "hardware.kernels.<class>.<ceiling>, "
                                      "hardware.overheads.collective_latency_s, "
                                      "hardware.efficiency.gpu_link)");
    }
    const auto [low, high] = range_of(term);
    if (is_hardware_term(term) && options.hardware_base.is_null()) {
      throw InputError("--terms", "\"" + term + "\" is a hardware term: the fit needs the profile");
    }
    const double value = is_hardware_term(term) ? hardware_term(options.hardware_base, term)
                                                : engine_term(base, term);
    start.push_back(std::log(std::clamp(value > 0 ? value : kStartOfUnsetTerm, low, high)));
  }
  std::vector<ServingRun> served;
  for (const ServingRun& run : runs) {
    if (!run.points.empty()) served.push_back(run);
  }
  if (served.empty()) throw InputError("calibrate", "no measured point to fit");

  EngineFitReport report;
  const Fit all = fit_terms(served, start, predict, options);
  report.evaluations += all.evaluations;
  const std::vector<ConfigOverride> fitted = overrides_of(options.terms, all.log_values);
  report.fitted = predict(runs, fitted);

  // Leave one out: each group's points predicted by a fit to the other groups'.
  std::set<std::string> groups;
  for (const ServingRun& run : served)
    groups.insert(group_of(run, options.hold_out));
  if (groups.size() >= 2) {
    std::vector<PointComparison> held_out;
    for (const std::string& held : groups) {
      std::vector<ServingRun> train, test;
      for (const ServingRun& run : served)
        (group_of(run, options.hold_out) == held ? test : train).push_back(run);
      const Fit fold = fit_terms(train, all.log_values, predict, options);
      report.evaluations += fold.evaluations;
      ServingValidation v = predict(test, overrides_of(options.terms, fold.log_values));
      for (auto& point : v.points)
        held_out.push_back(std::move(point));
    }
    report.held_out = summarize_serving(std::move(held_out));
  }

  // The fitted engine: the base with the terms set, each with its source; the fitted hardware
  // profile likewise.
  std::size_t points = 0;
  for (const ServingRun& run : served)
    points += run.points.size();
  const std::string source =
      "fitted by servesim calibrate --measured (least squares of log relative errors of mean "
      "TTFT, ITL, TPOT and E2E, or throughput where no latency was measured, Nelder-Mead) to " +
      std::to_string(points) + " measured points (files: calibration.files)";
  std::map<std::string, double> hardware_terms, engine_terms;
  for (std::size_t i = 0; i < options.terms.size(); ++i) {
    const std::string& term = options.terms[i];
    const double value = value_of(term, all.log_values[i]);
    report.terms[term] = value;
    (is_hardware_term(term) ? hardware_terms : engine_terms)[term] = value;
  }
  const auto stats_json = [](const ServingValidation& v) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [metric, s] : v.metrics) {
      out[std::string(serving_metric_name(metric))] = {{"count", s.count},
                                                       {"mape", s.mape},
                                                       {"median_ape", s.median_ape},
                                                       {"max_ape", s.max_ape},
                                                       {"bias", s.bias}};
    }
    return out;
  };
  const std::string held_key = "leave_one_" + std::string(hold_out_name(options.hold_out)) + "_out";
  nlohmann::json calibration = {{"tool", "servesim calibrate --measured"},
                                {"base_engine", base.name},
                                {"files", files},
                                {"points", points},
                                {"terms", options.terms},
                                {"residuals", stats_json(report.fitted)},
                                {held_key, stats_json(report.held_out)}};
  if (!options.selection.empty()) calibration["selected"] = options.selection;
  if (engine_terms.empty()) calibration.erase("base_engine");  // each point ran its own engine
  if (!engine_terms.empty()) {
    nlohmann::json j = engine_to_json(base);
    for (const auto& [term, value] : engine_terms) {
      j[pointer_of(term)] = value;
      j["sources"][term] = source;
    }
    j["calibration"] = calibration;
    report.engine = engine_from_json(j, base.source);
    report.engine.source = base.source;
  }
  if (!hardware_terms.empty()) {
    report.hardware = hardware_with_terms(options.hardware_base, hardware_terms);
    for (const auto& [term, value] : hardware_terms)
      report.hardware["sources"][term.substr(std::string_view(kHardwareTermPrefix).size())] =
          source;
    // Beside what the profile was fitted from before (operator records), not over it.
    if (!report.hardware["calibration"].is_object()) report.hardware["calibration"] = {};
    report.hardware["calibration"]["serving_fit"] = calibration;
  }
  return report;
}

}  // namespace servesim
