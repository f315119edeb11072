#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cli/capacity_layout_matching.h"
#include "sim/cli/capacity_layouts.h"
#include "sim/cli/capacity_study.h"
#include "sim/cli/study_options.h"
#include "sim/core/error.h"
#include "sim/study/layout_search.h"
#include "sim/study/rate_search.h"
#include "sim/study/slo_bounds.h"

namespace servesim::cli {
namespace {

// What --minimize ranks deployments by, smallest first.
std::tuple<double, double> rank_of(const LayoutDeployment& d, bool by_cost) {
  const double cost =
      d.prices ? d.prices->usd_per_million_tokens : std::numeric_limits<double>::infinity();
  const double gpus = static_cast<double>(d.gpus);
  return by_cost ? std::tuple{cost, gpus} : std::tuple{gpus, cost};
}

// --target-rate, --minimize, --shapes and --max-replicas, checked against the base
// configuration.
LayoutSearchTerms parse_layout_search(const CapacityStudy& study, const po::variables_map& vm) {
  LayoutSearchTerms terms;
  const double rate = vm["target-rate"].as<double>();
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw UsageError("--target-rate: expected a positive number of requests/s");
  }
  terms.rate_per_s = rate;
  const std::string minimize = vm["minimize"].as<std::string>();
  if (minimize != "gpus" && minimize != "cost") {
    throw UsageError("--minimize: expected gpus or cost, got \"" + minimize + "\"");
  }
  terms.minimize = minimize;
  terms.by_cost = minimize == "cost";
  const nlohmann::json base =
      study_point_config(study.base, {}, study.context.data_root, "capacity");
  (void)configured_rate(base, "use --arrival poisson", "--start-rate");
  if (base.contains("disaggregation") && !base["disaggregation"].is_null()) {
    throw UsageError(
        "--disaggregated: the search lays the roles out from --shapes; drop the "
        "disaggregation section and flags (--disaggregation, --prefill-replicas, ...)");
  }
  terms.shapes = parse_shapes(vm.count("shapes") != 0 ? vm["shapes"].as<std::string>() : "", base);
  terms.max_replicas = vm["max-replicas"].as<std::int64_t>();
  return terms;
}

// Each shape's aggregated deployment: its fewest replicas, or why there are none.
// `aggregated_unreachable` says which shapes were not searched, and `aggregated` holds the
// searched ones' results, in order.
std::vector<LayoutDeployment> aggregated_deployments(
    const CapacityStudy& study, const po::variables_map& vm, const LayoutSearchTerms& terms,
    const std::vector<std::optional<std::string>>& aggregated_unreachable,
    const std::vector<ReplicaSearchResult>& aggregated) {
  const std::vector<ReplicaShape>& shapes = terms.shapes;
  std::vector<LayoutDeployment> deployments;
  std::size_t next = 0;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    LayoutDeployment& d = deployments.emplace_back();
    d.kind = "aggregated";
    d.label = shapes[s].label();
    d.json = {{"kind", d.kind},     {"deployment", d.label}, {"hardware", shapes[s].hardware},
              {"tp", shapes[s].tp}, {"pp", shapes[s].pp},    {"replicas", nullptr}};
    if (aggregated_unreachable[s]) {
      d.note = *aggregated_unreachable[s];
      d.json["unreachable"] = d.note;
      continue;
    }
    const ReplicaSearchResult& result = aggregated[next++];
    d.json["points"] = nlohmann::json::array();
    for (const auto& point : result.points) {
      d.json["points"].push_back({{"replicas", point.replicas},
                                  {"verdict", verdict_json(point.verdict)},
                                  {"summary", point.summary}});
    }
    const ReplicaPoint* answer = result.answer();
    if (answer == nullptr) {
      const ReplicaPoint& last = result.points.back();
      d.note = (last.verdict.fails_at_any_load
                    ? ""
                    : "more than " + std::to_string(terms.max_replicas) + " replicas: ") +
               violations_text(last.verdict);
      continue;
    }
    d.counts = std::to_string(answer->replicas);
    d.gpus = answer->replicas * shapes[s].gpus_per_replica();
    d.summary = &answer->summary;
    if (const auto price = price_per_gpu_hour(shapes[s], vm, study.context)) {
      d.prices = serving_prices(*price, d.gpus, terms.rate_per_s, answer->summary);
    }
    d.json["replicas"] = answer->replicas;
    d.json["gpus"] = d.gpus;
    if (d.prices) d.json.update(serving_prices_json(*d.prices));
  }
  return deployments;
}

// The best deployment of `kind` with an answer, by what --minimize ranks; null when none.
const LayoutDeployment* best_deployment(const std::vector<LayoutDeployment>& deployments,
                                        const std::string& kind, bool by_cost) {
  const LayoutDeployment* best = nullptr;
  for (const LayoutDeployment& d : deployments) {
    if (d.kind == kind && d.summary && (!best || rank_of(d, by_cost) < rank_of(*best, by_cost))) {
      best = &d;
    }
  }
  return best;
}

std::vector<ConfigOverride> layout_point_overrides(const Layout& layout, RoleCounts counts,
                                                   double rate_per_s) {
  auto overrides = layout_overrides(layout, counts);
  overrides.push_back(rate_override(rate_per_s));
  return overrides;
}

// Each searched layout's points and answer, into its deployment.
void record_layout_answers(const CapacityStudy& study, const po::variables_map& vm,
                           const LayoutSearchTerms& terms, const MatchedLayouts& matched,
                           const std::vector<LayoutSearchResult>& results,
                           std::vector<LayoutDeployment>& deployments) {
  for (std::size_t l = 0; l < matched.layouts.size(); ++l) {
    LayoutDeployment& d = deployments[matched.rows[l]];
    const Layout& layout = matched.layouts[l];
    d.json["points"] = nlohmann::json::array();
    for (const auto& point : results[l].points) {
      d.json["points"].push_back({{"prefill_replicas", point.counts.prefill},
                                  {"decode_replicas", point.counts.decode},
                                  {"verdict", verdict_json(point.verdict)},
                                  {"summary", point.summary}});
    }
    const LayoutPoint* answer = results[l].answer_point();
    if (answer == nullptr) {
      const LayoutPoint& last = results[l].points.back();
      d.note = (last.verdict.fails_at_any_load
                    ? ""
                    : "more than " + std::to_string(terms.max_replicas) + " replicas per role: ") +
               violations_text(last.verdict);
      continue;
    }
    d.counts = counts_text(answer->counts);
    d.gpus = layout.gpus(answer->counts);
    d.summary = &answer->summary;
    if (const auto cost = layout_usd_per_hour(layout, answer->counts, vm, study.context)) {
      // The GPUs' mean price, so that the deployment's $/hour is each role's.
      d.prices = serving_prices(*cost / static_cast<double>(d.gpus), d.gpus, terms.rate_per_s,
                                answer->summary);
    }
    d.json["prefill"]["replicas"] = answer->counts.prefill;
    d.json["decode"]["replicas"] = answer->counts.decode;
    d.json["gpus"] = d.gpus;
    if (d.prices) d.json.update(serving_prices_json(*d.prices));
  }
}

// Every point evaluated, in order: the aggregated shapes', then the layouts'.
std::vector<SearchedPoint> evaluated_points(double rate_per_s,
                                            const std::vector<ReplicaShape>& searched,
                                            const std::vector<ReplicaSearchResult>& aggregated,
                                            const MatchedLayouts& matched,
                                            const std::vector<LayoutSearchResult>& results) {
  std::vector<SearchedPoint> evaluated;
  for (std::size_t s = 0; s < searched.size(); ++s) {
    const ReplicaShape& shape = searched[s];
    for (const auto& point : aggregated[s].points) {
      evaluated.push_back(
          {shape.label(),
           std::to_string(point.replicas),
           point.replicas * shape.gpus_per_replica(),
           &point.summary,
           &point.verdict,
           replica_point_overrides(shape, rate_per_s, point.replicas),
           {"aggregated", shape.hardware, std::to_string(shape.tp), std::to_string(shape.pp),
            std::to_string(point.replicas), "", "", "", ""}});
    }
  }
  for (std::size_t l = 0; l < matched.layouts.size(); ++l) {
    const Layout& layout = matched.layouts[l];
    for (const auto& point : results[l].points) {
      evaluated.push_back(
          {layout.label(),
           counts_text(point.counts),
           layout.gpus(point.counts),
           &point.summary,
           &point.verdict,
           layout_point_overrides(layout, point.counts, rate_per_s),
           {"disaggregated", layout.prefill.hardware, std::to_string(layout.prefill.tp),
            std::to_string(layout.prefill.pp), std::to_string(point.counts.prefill),
            layout.decode.hardware, std::to_string(layout.decode.tp),
            std::to_string(layout.decode.pp), std::to_string(point.counts.decode)}});
    }
  }
  return evaluated;
}

// summary.json of the search: every deployment, the best of each kind and the front.
nlohmann::json layouts_document(const CapacityStudy& study, const LayoutSearchTerms& terms,
                                const std::vector<LayoutDeployment>& deployments,
                                const nlohmann::json& front_json) {
  nlohmann::json best_json = nlohmann::json::object();
  nlohmann::json deployments_json = nlohmann::json::array();
  for (const LayoutDeployment& d : deployments)
    deployments_json.push_back(d.json);
  for (const std::string kind : {"aggregated", "disaggregated"}) {
    const LayoutDeployment* best = best_deployment(deployments, kind, terms.by_cost);
    best_json[kind] = best ? best->json : nlohmann::json();
  }
  return {{"command", "capacity"},
          {"mode", "layouts"},
          {"slo", slo_json(study.slo)},
          {"target_rate_per_s", terms.rate_per_s},
          {"max_replicas", terms.max_replicas},
          {"minimize", terms.minimize},
          {"deployments", deployments_json},
          {"best", best_json},
          {"front", front_json}};
}

// Every shape's requests alone: the bounds of both kinds, and the mean request.
struct ShapesAlone {
  std::vector<nlohmann::json> summaries;  // per shape
  std::optional<MeanRequest> mean;
};
ShapesAlone shapes_alone(CapacityStudy& study, const std::vector<ReplicaShape>& shapes) {
  std::vector<std::vector<ConfigOverride>> shape_sets;
  std::vector<std::string> probe_names;
  for (const auto& shape : shapes) {
    shape_sets.push_back(shape_overrides(shape, "--shapes"));
    probe_names.push_back("capacity bound (" + shape.label() + ")");
  }
  ShapesAlone alone{study.alone(shape_sets, probe_names), std::nullopt};
  for (const auto& summary : alone.summaries) {
    if (!alone.mean) alone.mean = mean_request(summary);
  }
  return alone;
}

// Runs each round of the layouts' points, each layout at its counts and the target rate.
LayoutEvaluator layout_trials_runner(CapacityStudy& study, const MatchedLayouts& matched,
                                     double rate_per_s) {
  return [&study, &matched, rate_per_s](const std::vector<LayoutTrial>& trials) {
    std::vector<std::vector<ConfigOverride>> overrides;
    std::vector<std::string> names;
    for (const auto& trial : trials) {
      const Layout& layout = matched.layouts[trial.layout];
      overrides.push_back(layout_point_overrides(layout, trial.counts, rate_per_s));
      names.push_back("capacity point (" + layout.label() + ", " + counts_text(trial.counts) + ")");
    }
    return study.run(overrides, names);
  };
}

// capacity.csv's points: every point evaluated, by its GPUs.
CapacityPoints layout_capacity_points(const std::vector<SearchedPoint>& evaluated) {
  CapacityPoints points;
  points.keys = {"kind",      "hardware",  "tp",
                 "pp",        "replicas",  "decode_hardware",
                 "decode_tp", "decode_pp", "decode_replicas"};
  points.x_label = "GPUs";
  for (const SearchedPoint& e : evaluated)
    points.add(e.keys, *e.summary, *e.verdict, static_cast<double>(e.gpus));
  return points;
}

}  // namespace

int search_layouts(CapacityStudy& study, const po::variables_map& vm) {
  const LayoutSearchTerms terms = parse_layout_search(study, vm);
  const double rate = terms.rate_per_s;
  const std::vector<ReplicaShape>& shapes = terms.shapes;
  const ShapesAlone alone = shapes_alone(study, shapes);

  // The aggregated shapes, searched as `capacity --target-rate` searches them.
  std::vector<ReplicaShape> searched;
  std::vector<std::optional<std::string>> aggregated_unreachable;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    aggregated_unreachable.push_back(unreachable(study.slo, alone.summaries[s]));
    if (!aggregated_unreachable.back()) searched.push_back(shapes[s]);
  }
  const auto aggregated = search_shape_replicas(study, searched, rate, terms.max_replicas);
  std::vector<LayoutDeployment> deployments =
      aggregated_deployments(study, vm, terms, aggregated_unreachable, aggregated);
  // The best aggregated answer, copied: `deployments` grows below.
  std::optional<LayoutDeployment> best_aggregated;
  if (const LayoutDeployment* best = best_deployment(deployments, "aggregated", terms.by_cost)) {
    best_aggregated = *best;
  }

  // The layouts: every pair of shapes, rate-matched, pruned, then searched.
  const MatchedLayouts matched =
      match_layouts(study, vm, terms, alone.summaries, alone.mean, best_aggregated, deployments);
  const auto results = search_fewest_layouts(study.slo, matched.starts, terms.max_replicas,
                                             layout_trials_runner(study, matched, rate));
  if (!study.context.processes.leader()) return 0;
  record_layout_answers(study, vm, terms, matched, results, deployments);

  // Every deployment meeting the SLO serves the target rate: its output tokens/s per GPU are
  // the rate's over its GPUs (a window's measured throughput would rank equal deployments by
  // their noise).
  const double output_per_s = alone.mean ? rate * alone.mean->output_tokens : 0.0;
  // Every point evaluated, in order, and the Pareto front of those meeting the SLO.
  const std::vector<SearchedPoint> evaluated =
      evaluated_points(rate, searched, aggregated, matched, results);
  const bool write_configs = study_out_dir(vm).has_value();
  const LayoutFront front = layout_front(study, evaluated, output_per_s, write_configs);

  for (LayoutDeployment& d : deployments) {
    if (!d.summary) continue;
    d.output_per_gpu = output_per_s / static_cast<double>(d.gpus);
    d.output_per_user = output_per_user(*d.summary);
  }

  // The best of each kind.
  const LayoutDeployment* best_aggregated_answer =
      best_deployment(deployments, "aggregated", terms.by_cost);
  const LayoutDeployment* best_disaggregated_answer =
      best_deployment(deployments, "disaggregated", terms.by_cost);
  const nlohmann::json document = layouts_document(study, terms, deployments, front.json);
  publish_capacity(study, vm, layout_capacity_points(evaluated), document, front.config_files);

  const bool any = best_aggregated_answer || best_disaggregated_answer;
  if (vm.count("json") != 0) {
    study.context.out << document.dump(2) << '\n';
  } else {
    print_layouts_report(study.context.out, {rate,
                                             terms.by_cost,
                                             deployments,
                                             evaluated,
                                             {best_aggregated_answer, best_disaggregated_answer},
                                             {!searched.empty(), !matched.layouts.empty()},
                                             front.table,
                                             !front.json.empty(),
                                             write_configs});
  }
  if (!any) {
    study.context.err << "servesim: error: no deployment meets the SLO at " << rate_text(rate)
                      << " req/s with up to " << terms.max_replicas << " replicas per role\n";
    return exit_code_for(ErrorKind::Infeasible);
  }
  return 0;
}

}  // namespace servesim::cli
