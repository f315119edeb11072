#include "sim/study/layout_study.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/study/slo_bounds.h"

namespace servesim {
namespace {

// What --minimize ranks deployments by, smallest first.
std::tuple<double, double> rank_of(const LayoutDeployment& d, bool by_cost) {
  const double cost =
      d.prices ? d.prices->usd_per_million_tokens : std::numeric_limits<double>::infinity();
  const double gpus = static_cast<double>(d.gpus);
  return by_cost ? std::tuple{cost, gpus} : std::tuple{gpus, cost};
}

// Each shape's aggregated deployment: its fewest replicas, or why there are none.
// `aggregated_unreachable` says which shapes were not searched, and `aggregated` holds the
// searched ones' results, in order.
std::vector<LayoutDeployment> aggregated_deployments(
    const CapacitySearch& search, const LayoutSearchTerms& terms,
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
    if (const auto price =
            price_per_gpu_hour(shapes[s], terms.gpu_cost_per_hour, search.data_root)) {
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
void record_layout_answers(const CapacitySearch& search, const LayoutSearchTerms& terms,
                           const MatchedLayouts& matched,
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
    if (const auto cost = layout_usd_per_hour(layout, answer->counts, terms, search.data_root)) {
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
nlohmann::json layouts_document(const CapacitySearch& search, const LayoutSearchTerms& terms,
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
          {"slo", slo_json(search.slo)},
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
ShapesAlone shapes_alone(CapacitySearch& search, const std::vector<ReplicaShape>& shapes) {
  std::vector<std::vector<ConfigOverride>> shape_sets;
  std::vector<std::string> probe_names;
  for (const auto& shape : shapes) {
    shape_sets.push_back(shape_overrides(shape, "--shapes"));
    probe_names.push_back("capacity bound (" + shape.label() + ")");
  }
  ShapesAlone alone{search.alone(shape_sets, probe_names), std::nullopt};
  for (const auto& summary : alone.summaries) {
    if (!alone.mean) alone.mean = mean_request(summary);
  }
  return alone;
}

// Runs each round of the layouts' points, each layout at its counts and the target rate.
LayoutEvaluator layout_trials_runner(CapacitySearch& search, const MatchedLayouts& matched,
                                     double rate_per_s) {
  return [&search, &matched, rate_per_s](const std::vector<LayoutTrial>& trials) {
    std::vector<std::vector<ConfigOverride>> overrides;
    std::vector<std::string> names;
    for (const auto& trial : trials) {
      const Layout& layout = matched.layouts[trial.layout];
      overrides.push_back(layout_point_overrides(layout, trial.counts, rate_per_s));
      names.push_back("capacity point (" + layout.label() + ", " + counts_text(trial.counts) + ")");
    }
    return search.run(overrides, names);
  };
}

}  // namespace

LayoutStudy search_layout_study(CapacitySearch& search, const LayoutSearchTerms& terms,
                                bool write_configs) {
  LayoutStudy study;
  study.terms = terms;
  const double rate = terms.rate_per_s;
  const std::vector<ReplicaShape>& shapes = terms.shapes;
  const ShapesAlone alone = shapes_alone(search, shapes);

  // The aggregated shapes, searched as `capacity --target-rate` searches them.
  std::vector<std::optional<std::string>> aggregated_unreachable;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    aggregated_unreachable.push_back(unreachable(search.slo, alone.summaries[s]));
    if (!aggregated_unreachable.back()) study.searched.push_back(shapes[s]);
  }
  study.aggregated = search_shape_replicas(search, study.searched, rate, terms.max_replicas);
  study.deployments =
      aggregated_deployments(search, terms, aggregated_unreachable, study.aggregated);
  // The best aggregated answer, copied: `deployments` grows below.
  std::optional<LayoutDeployment> best_aggregated;
  if (const LayoutDeployment* best =
          best_deployment(study.deployments, "aggregated", terms.by_cost)) {
    best_aggregated = *best;
  }

  // The layouts: every pair of shapes, rate-matched, pruned, then searched.
  study.matched =
      match_layouts(search, terms, alone.summaries, alone.mean, best_aggregated, study.deployments);
  study.layouts = search_fewest_layouts(search.slo, study.matched.starts, terms.max_replicas,
                                        layout_trials_runner(search, study.matched, rate));
  record_layout_answers(search, terms, study.matched, study.layouts, study.deployments);

  // Every deployment meeting the SLO serves the target rate: its output tokens/s per GPU are
  // the rate's over its GPUs (a window's measured throughput would rank equal deployments by
  // their noise).
  const double output_per_s = alone.mean ? rate * alone.mean->output_tokens : 0.0;
  // Every point evaluated, in order, and the Pareto front of those meeting the SLO.
  study.evaluated =
      evaluated_points(rate, study.searched, study.aggregated, study.matched, study.layouts);
  study.front = layout_front(search, study.evaluated, output_per_s, write_configs);
  for (LayoutDeployment& d : study.deployments) {
    if (!d.summary) continue;
    d.output_per_gpu = output_per_s / static_cast<double>(d.gpus);
    d.output_per_user = output_per_user(*d.summary);
  }

  // The best of each kind.
  study.best = {best_deployment(study.deployments, "aggregated", terms.by_cost),
                best_deployment(study.deployments, "disaggregated", terms.by_cost)};
  study.searched_any = {!study.searched.empty(), !study.matched.layouts.empty()};
  study.document = layouts_document(search, terms, study.deployments, study.front.json);
  return study;
}

}  // namespace servesim
