#include "python/capacity.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "python/conversions.h"
#include "python/settings.h"
#include "python/study_support.h"
#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/capacity_search.h"
#include "sim/study/layout_study.h"
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

py::list slo_texts(const SloTarget& slo) {
  py::list terms;
  for (const auto& limit : slo.limits)
    terms.append(limit.text());
  if (slo.attainment) terms.append("attainment >= " + format_9_digits(*slo.attainment));
  return terms;
}

// The violations joined with "; ", empty when there are none (the frames' convention).
std::string violations_joined(const SloVerdict& verdict) {
  std::string text;
  for (const auto& v : verdict.violations)
    text += (text.empty() ? "" : "; ") + v;
  return text;
}

// The prices' keys, each None when there is no price.
constexpr const char* kPriceKeys[] = {"usd_per_gpu_hour",
                                      "usd_per_hour",
                                      "usd_per_million_input_tokens",
                                      "usd_per_million_output_tokens",
                                      "usd_per_million_tokens",
                                      "usd_per_thousand_requests"};

py::object price_value(const std::optional<ServingPrices>& prices, const char* key) {
  if (!prices) return py::none();
  return py::float_(serving_prices_json(*prices)[key].get<double>());
}

// "h100-sxm", "h100-sxm:2", "h100-sxm:2:1", ("h100-sxm", 2) or ("h100-sxm", 2, 1).
ReplicaShape shape_of(const py::handle& item) {
  const std::string text = py::repr(item).cast<std::string>();
  const auto fail = [&text]() -> ReplicaShape {
    throw UsageError("shapes: " + text +
                     ": expected \"HARDWARE[:TP[:PP]]\" or (HARDWARE, TP[, PP]) with degrees >= 1");
  };
  std::vector<nlohmann::json> parts;
  if (py::isinstance<py::str>(item)) {
    const std::string s = item.cast<std::string>();
    std::size_t start = 0;
    while (true) {
      const std::size_t colon = s.find(':', start);
      const std::string part = s.substr(start, colon - start);
      if (parts.empty()) {
        parts.emplace_back(part);
      } else {
        try {
          std::size_t end = 0;
          const long long value = std::stoll(part, &end);
          if (end != part.size()) return fail();
          parts.emplace_back(value);
        } catch (const std::exception&) {
          return fail();
        }
      }
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  } else {
    parts = values_of(item, "shapes");
  }
  if (parts.empty() || parts.size() > 3 || !parts[0].is_string() ||
      parts[0].get<std::string>().empty()) {
    return fail();
  }
  ReplicaShape shape{parts[0].get<std::string>(), 1, 1, std::nullopt};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].is_number_integer() || parts[i].get<std::int64_t>() < 1) return fail();
    (i == 1 ? shape.tp : shape.pp) = parts[i].get<std::int64_t>();
  }
  return shape;
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
  const std::filesystem::path working_dir = std::filesystem::current_path();
  const auto executor = executor_for(options.jobs);
  RateSearchResult result;
  {
    const py::gil_scoped_release release;
    const double configured = configured_rate(study_point_config(base, {}, root, "capacity"),
                                              "set arrival=\"poisson\"", "start_rate");
    search.start_rate_per_s = options.start_rate_per_s.value_or(configured);
    result = search_highest_rate(slo, search, [&](const std::vector<double>& rates) {
      std::vector<std::vector<ConfigOverride>> overrides;
      std::vector<std::string> names;
      for (const double rate : rates) {
        overrides.push_back({rate_override(rate)});
        names.push_back("capacity point (rate=" + format_9_digits(rate) + ")");
      }
      return simulate_points(base, overrides, names, *executor, root, working_dir, nullptr,
                             PointMeasure{true, completions_needed(slo), {}, &slo});
    });
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
  document["points"] =
      points_frame({{"rate_per_s", rates}, {"met", met}, {"violations", violations}}, summaries);
  return document;
}

// The target rate, checked.
double target_rate(const CapacityOptions& options) {
  const double rate = *options.target_rate_per_s;
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw UsageError("target_rate: expected a positive number of requests/s");
  }
  return rate;
}

// `shapes`: one shape or a list of them; empty when None.
std::vector<ReplicaShape> shapes_of(const CapacityOptions& options) {
  std::vector<ReplicaShape> shapes;
  if (!options.shapes.is_none()) {
    if (py::isinstance<py::str>(options.shapes)) {
      shapes.push_back(shape_of(options.shapes));
    } else {
      for (const auto& item : options.shapes)
        shapes.push_back(shape_of(item));
    }
  }
  return shapes;
}

// The configured shape when none is given.
void default_shape(std::vector<ReplicaShape>& shapes, const nlohmann::json& config) {
  if (shapes.empty()) {
    shapes.push_back({config["hardware"].get<std::string>(), config["tp"].get<std::int64_t>(),
                      config["pp"].get<std::int64_t>(), std::nullopt});
  }
}

// A frame of named columns, in the order given.
py::object named_frame(const std::vector<std::pair<const char*, py::list>>& columns) {
  py::dict data;
  py::list names;
  for (const auto& [name, column] : columns) {
    data[name] = column;
    names.append(name);
  }
  return frame(data, names);
}

py::dict search_replicas(const ConfigSources& base, const SloTarget& slo,
                         const CapacityOptions& options) {
  const double rate = target_rate(options);
  std::vector<ReplicaShape> shapes = shapes_of(options);
  const std::filesystem::path root = data_root();
  const std::filesystem::path working_dir = std::filesystem::current_path();
  const auto executor = executor_for(options.jobs);
  std::vector<ReplicaSearchResult> results;
  {
    const py::gil_scoped_release release;
    const nlohmann::json config = study_point_config(base, {}, root, "capacity");
    (void)configured_rate(config, "set arrival=\"poisson\"", "start_rate");
    default_shape(shapes, config);
    CapacitySearch search{base,
                          slo,
                          *executor,
                          root,
                          working_dir,
                          nullptr,
                          PointMeasure{true, completions_needed(slo), {}, &slo},
                          nullptr};
    results = search_shape_replicas(search, shapes, rate, options.max_replicas, "shapes");
  }

  py::list hardware, tp, pp, replicas, gpus, unfit, ttft_p99, tpot_p99;
  std::vector<py::list> price_columns(std::size(kPriceKeys));
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

// A column of optional numbers: None where there is none.
py::object number_or_none(bool has, double value) {
  return has ? py::object(py::float_(value)) : py::object(py::none());
}

py::dict search_layouts(const ConfigSources& base, const SloTarget& slo,
                        const CapacityOptions& options) {
  LayoutSearchTerms terms;
  terms.rate_per_s = target_rate(options);
  if (options.minimize != "gpus" && options.minimize != "cost") {
    throw UsageError("minimize: expected \"gpus\" or \"cost\", got \"" + options.minimize + "\"");
  }
  terms.minimize = options.minimize;
  terms.by_cost = options.minimize == "cost";
  terms.max_replicas = options.max_replicas;
  terms.gpu_cost_per_hour = options.gpu_cost_per_hour;
  terms.shapes = shapes_of(options);
  const std::filesystem::path root = data_root();
  const auto executor = executor_for(options.jobs);
  std::optional<LayoutStudy> answer;
  {
    const py::gil_scoped_release release;
    const nlohmann::json config = study_point_config(base, {}, root, "capacity");
    (void)configured_rate(config, "set arrival=\"poisson\"", "start_rate");
    if (config.contains("disaggregation") && !config["disaggregation"].is_null()) {
      throw UsageError(
          "disaggregated: the search lays the roles out from shapes; drop the disaggregation "
          "section and settings");
    }
    default_shape(terms.shapes, config);
    CapacitySearch search{base,
                          slo,
                          *executor,
                          root,
                          std::filesystem::current_path(),
                          nullptr,
                          PointMeasure{true, completions_needed(slo), {}, &slo},
                          nullptr};
    answer.emplace(search_layout_study(search, terms, false));
  }

  // Every deployment: its answer, prices and latencies, or why there is none.
  py::list kind, deployment, replicas, gpus, usd_per_hour, usd_per_million_tokens, ttft_p99,
      tpot_p99, per_gpu, per_user, note;
  for (const LayoutDeployment& d : answer->deployments) {
    const bool has = d.summary != nullptr;
    kind.append(d.kind);
    deployment.append(d.label);
    replicas.append(has ? py::object(py::str(d.counts)) : py::object(py::none()));
    gpus.append(has ? py::object(py::int_(d.gpus)) : py::object(py::none()));
    usd_per_hour.append(
        number_or_none(d.prices.has_value(), d.prices ? d.prices->usd_per_hour : 0));
    usd_per_million_tokens.append(
        number_or_none(d.prices.has_value(), d.prices ? d.prices->usd_per_million_tokens : 0));
    ttft_p99.append(number_or_none(has, has ? summary_value(*d.summary, "ttft_s.p99") : 0));
    tpot_p99.append(number_or_none(has, has ? summary_value(*d.summary, "tpot_s.p99") : 0));
    per_gpu.append(number_or_none(has, d.output_per_gpu));
    per_user.append(number_or_none(has, d.output_per_user));
    note.append(d.note.empty() ? py::object(py::none()) : py::object(py::str(d.note)));
  }
  // The Pareto front of the points meeting the SLO.
  py::list front_deployment, front_replicas, front_gpus, front_per_gpu, front_per_user, front_ttft,
      front_tpot;
  for (const LayoutFrontPoint& f : answer->front.points) {
    front_deployment.append(f.point->label);
    front_replicas.append(f.point->counts);
    front_gpus.append(f.point->gpus);
    front_per_gpu.append(f.output_per_gpu);
    front_per_user.append(f.output_per_user);
    front_ttft.append(summary_value(*f.point->summary, "ttft_s.p99"));
    front_tpot.append(summary_value(*f.point->summary, "tpot_s.p99"));
  }
  // Every point simulated, in order.
  py::list point_deployment, point_replicas, point_gpus, met, violations;
  std::vector<const nlohmann::json*> summaries;
  for (const SearchedPoint& e : answer->evaluated) {
    point_deployment.append(e.label);
    point_replicas.append(e.counts);
    point_gpus.append(e.gpus);
    met.append(e.verdict->met);
    violations.append(violations_joined(*e.verdict));
    summaries.push_back(e.summary);
  }

  py::dict document;
  document["mode"] = "layouts";
  document["slo"] = slo_texts(slo);
  document["target_rate_per_s"] = terms.rate_per_s;
  document["max_replicas"] = terms.max_replicas;
  document["minimize"] = terms.minimize;
  document["deployments"] = named_frame({{"kind", kind},
                                         {"deployment", deployment},
                                         {"replicas", replicas},
                                         {"gpus", gpus},
                                         {"usd_per_hour", usd_per_hour},
                                         {"usd_per_million_tokens", usd_per_million_tokens},
                                         {"ttft_p99_s", ttft_p99},
                                         {"tpot_p99_s", tpot_p99},
                                         {"output_tokens_per_s_per_gpu", per_gpu},
                                         {"output_tokens_per_s_per_user", per_user},
                                         {"note", note}});
  document["best"] = to_python(answer->document["best"]);
  document["front"] = named_frame({{"deployment", front_deployment},
                                   {"replicas", front_replicas},
                                   {"gpus", front_gpus},
                                   {"output_tokens_per_s_per_gpu", front_per_gpu},
                                   {"output_tokens_per_s_per_user", front_per_user},
                                   {"ttft_p99_s", front_ttft},
                                   {"tpot_p99_s", front_tpot}});
  document["points"] = points_frame({{"deployment", point_deployment},
                                     {"replicas", point_replicas},
                                     {"gpus", point_gpus},
                                     {"met", met},
                                     {"violations", violations}},
                                    summaries);
  return document;
}

}  // namespace

py::dict capacity(const py::object& config, const CapacityOptions& options,
                  const py::kwargs& settings) {
  const ConfigSources base = config_sources(config, settings);
  const SloTarget slo = slo_target(options.slo);
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
