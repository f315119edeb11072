#include "python/capacity.h"

#include <filesystem>
#include <string>
#include <vector>

#include "python/capacity_layouts.h"
#include "python/capacity_support.h"
#include "python/conversions.h"
#include "python/settings.h"
#include "python/study_support.h"
#include "sim/core/error.h"
#include "sim/study/capacity_search.h"
#include "sim/study/point_simulation.h"
#include "sim/study/rate_search.h"
#include "sim/study/replica_search.h"
#include "sim/study/serving_prices.h"
#include "sim/study/slo.h"
#include "sim/study/summary_columns.h"

namespace servesim::python {
namespace {

// The SLO terms: a dict {"ttft_p99": 0.5}, one term "ttft_p99=0.5" or a list of terms.
SloTarget slo_target(const py::object& slo) {
  SloTarget target;
  if (py::isinstance<py::dict>(slo)) {
    for (const auto& [key, value] : slo.cast<py::dict>()) {
      const std::string name = py::str(key).cast<std::string>();
      add_slo_term(target, name + "=" + to_json(value, "slo." + name).dump(), "slo");
    }
  } else if (py::isinstance<py::str>(slo)) {
    add_slo_term(target, slo.cast<std::string>(), "slo");
  } else if (!slo.is_none()) {
    for (const auto& term : values_of(slo, "slo")) {
      if (!term.is_string()) throw UsageError("slo: expected terms such as \"ttft_p99=0.5\"");
      add_slo_term(target, term.get<std::string>(), "slo");
    }
  }
  if (target.empty()) throw UsageError("slo: give at least one term (e.g. {\"ttft_p99\": 0.5})");
  return target;
}

py::dict search_rate(const ConfigSources& base, const SloTarget& slo,
                     const CapacityOptions& options) {
  RateSearchOptions search;
  search.relative_precision = options.precision;
  search.points_per_round = options.points_per_round;
  search.max_points = options.max_points;
  search.min_rate_per_s = options.min_rate_per_s;
  search.max_rate_per_s = options.max_rate_per_s;
  const std::filesystem::path root = data_root();
  const auto executor = executor_for(options.jobs);
  RateSearchResult result;
  {
    const py::gil_scoped_release release;
    const double configured = configured_rate(study_point_config(base, {}, root, "capacity"),
                                              "set arrival=\"poisson\"", "start_rate");
    search.start_rate_per_s = options.start_rate_per_s.value_or(configured);
    CapacitySearch points = python_search(base, slo, *executor, root);
    result = search_rate_with(points, {}, "", search);
  }

  py::list rates, met, violations;
  std::vector<const nlohmann::json*> summaries;
  for (const auto& point : result.points) {
    rates.append(point.rate_per_s);
    met.append(point.verdict.met);
    violations.append(violations_joined(point.verdict));
    summaries.push_back(&point.summary);
  }

  py::dict document;
  document["mode"] = "rate";
  document["slo"] = slo_texts(slo);
  document["outcome"] = std::string(outcome_name(result.outcome));
  const bool never_met = result.outcome == RateSearchResult::Outcome::NeverMet;
  document["rate_per_s"] =
      never_met ? py::object(py::none()) : py::float_(result.passing_rate_per_s);
  document["failing_rate_per_s"] = result.failing_rate_per_s > 0
                                       ? py::object(py::float_(result.failing_rate_per_s))
                                       : py::object(py::none());
  document["relative_precision"] = options.precision;
  // A rate above the answer the run was too short to judge: the answer is a lower bound.
  if (const RatePoint* undecided = result.undecided()) {
    py::dict bound;
    bound["rate_per_s"] = undecided->rate_per_s;
    bound["requests_to_settle"] = undecided->verdict.requests_to_settle;
    document["undecided"] = bound;
  } else {
    document["undecided"] = py::none();
  }
  std::optional<ServingPrices> prices;
  const RatePoint* best = result.best();
  if (!never_met && best != nullptr) {
    const nlohmann::json config = study_point_config(base, {}, root, "capacity");
    const std::int64_t gpus = config.value("replicas", std::int64_t{1}) *
                              config["tp"].get<std::int64_t>() * config["pp"].get<std::int64_t>();
    document["gpus"] = gpus;
    const ReplicaShape shape{config["hardware"].get<std::string>(), 1, 1, std::nullopt};
    if (const auto price = price_per_gpu_hour(shape, options.gpu_cost_per_hour, root)) {
      prices = serving_prices(*price, gpus, result.passing_rate_per_s, best->summary);
    }
  }
  for (const char* key : kPriceKeys)
    document[key] = price_value(prices, key);
  // The latencies at the answer, as the CLI's table shows them.
  for (const auto& [key, path] :
       {std::pair{"ttft_p99_s", "ttft_s.p99"}, std::pair{"tpot_p99_s", "tpot_s.p99"}}) {
    document[key] = !never_met && best != nullptr
                        ? py::object(py::float_(summary_value(best->summary, path)))
                        : py::object(py::none());
  }
  for (const auto& [key, value] :
       band_edges(!never_met && best != nullptr ? &best->summary : nullptr))
    document[key.c_str()] = value;
  document["points"] =
      points_frame({{"rate_per_s", rates}, {"met", met}, {"violations", violations}}, summaries);
  return document;
}

py::dict search_replicas(const ConfigSources& base, const SloTarget& slo,
                         const CapacityOptions& options) {
  const double rate = target_rate(options);
  std::vector<ReplicaShape> shapes = shapes_of(options);
  const std::filesystem::path root = data_root();
  const auto executor = executor_for(options.jobs);
  std::vector<ReplicaSearchResult> results;
  {
    const py::gil_scoped_release release;
    const nlohmann::json config = study_point_config(base, {}, root, "capacity");
    (void)configured_rate(config, "set arrival=\"poisson\"", "start_rate");
    default_shape(shapes, config);
    CapacitySearch search = python_search(base, slo, *executor, root);
    results = search_shape_replicas(search, shapes, rate, options.max_replicas, "shapes");
  }

  py::list hardware, tp, pp, replicas, gpus, unfit, ttft_p99, tpot_p99;
  std::vector<py::list> price_columns(kPriceKeys.size());
  std::vector<py::list> band_columns(kBandEdgeKeys.size());
  py::list point_hardware, point_tp, point_pp, point_replicas, met, violations;
  std::vector<const nlohmann::json*> summaries;
  for (const auto& result : results) {
    const ReplicaShape& shape = result.shape;
    for (const auto& point : result.points) {
      point_hardware.append(shape.hardware);
      point_tp.append(shape.tp);
      point_pp.append(shape.pp);
      point_replicas.append(point.replicas);
      met.append(point.verdict.met);
      violations.append(violations_joined(point.verdict));
      summaries.push_back(&point.summary);
    }
    hardware.append(shape.hardware);
    tp.append(shape.tp);
    pp.append(shape.pp);
    const ReplicaPoint* answer = result.answer();
    replicas.append(answer != nullptr ? py::object(py::int_(answer->replicas))
                                      : py::object(py::none()));
    gpus.append(answer != nullptr
                    ? py::object(py::int_(answer->replicas * shape.gpus_per_replica()))
                    : py::object(py::none()));
    // The answer's latencies, as the CLI's answer table shows them.
    const auto at_answer = [&](const char* path) {
      return answer != nullptr ? py::object(py::float_(summary_value(answer->summary, path)))
                               : py::object(py::none());
    };
    ttft_p99.append(at_answer("ttft_s.p99"));
    tpot_p99.append(at_answer("tpot_s.p99"));
    const auto edges = band_edges(answer != nullptr ? &answer->summary : nullptr);
    for (std::size_t k = 0; k < edges.size(); ++k)
      band_columns[k].append(edges[k].second);
    const auto reason =
        result.points.empty() ? std::nullopt : does_not_fit(result.points.back().summary);
    unfit.append(answer == nullptr && reason ? py::object(py::str(*reason))
                                             : py::object(py::none()));
    std::optional<ServingPrices> prices;
    if (answer != nullptr) {
      if (const auto price = price_per_gpu_hour(shape, options.gpu_cost_per_hour, root)) {
        prices = serving_prices(*price, answer->replicas * shape.gpus_per_replica(), rate,
                                answer->summary);
      }
    }
    for (std::size_t k = 0; k < price_columns.size(); ++k)
      price_columns[k].append(price_value(prices, kPriceKeys[k]));
  }
  std::vector<std::pair<const char*, py::list>> shape_columns{{"hardware", hardware},
                                                              {"tp", tp},
                                                              {"pp", pp},
                                                              {"replicas", replicas},
                                                              {"gpus", gpus},
                                                              {"ttft_p99_s", ttft_p99},
                                                              {"tpot_p99_s", tpot_p99},
                                                              {"does_not_fit", unfit}};
  for (std::size_t k = 0; k < price_columns.size(); ++k)
    shape_columns.emplace_back(kPriceKeys[k], price_columns[k]);
  for (std::size_t k = 0; k < band_columns.size(); ++k)
    shape_columns.emplace_back(kBandEdgeKeys[k], band_columns[k]);

  py::dict document;
  document["mode"] = "replicas";
  document["slo"] = slo_texts(slo);
  document["target_rate_per_s"] = rate;
  document["max_replicas"] = options.max_replicas;
  document["shapes"] = named_frame(shape_columns);
  document["points"] = points_frame({{"hardware", point_hardware},
                                     {"tp", point_tp},
                                     {"pp", point_pp},
                                     {"replicas", point_replicas},
                                     {"met", met},
                                     {"violations", violations}},
                                    summaries);
  return document;
}

}  // namespace

py::dict capacity(const py::object& config, const CapacityOptions& options,
                  const py::kwargs& settings) {
  const ConfigSources base = config_sources(config, settings);
  SloTarget slo = slo_target(options.slo);
  set_plan_at(slo, options.plan_at, "plan_at");
  if (options.disaggregated) {
    if (!options.target_rate_per_s) {
      throw UsageError("disaggregated: give target_rate (the layouts are searched at a rate)");
    }
    return search_layouts(base, slo, options);
  }
  return options.target_rate_per_s ? search_replicas(base, slo, options)
                                   : search_rate(base, slo, options);
}

}  // namespace servesim::python
