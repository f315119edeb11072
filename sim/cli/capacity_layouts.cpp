#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cli/capacity_layouts.h"
#include "sim/cli/capacity_study.h"
#include "sim/cli/study_options.h"
#include "sim/config/disaggregation_config.h"
#include "sim/core/error.h"
#include "sim/study/layout_search.h"
#include "sim/study/pareto_front.h"
#include "sim/study/rate_search.h"
#include "sim/study/slo_bounds.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {
namespace {

// A disaggregated layout: the shape of each role's replicas.
struct Layout {
  ReplicaShape prefill;
  ReplicaShape decode;
  std::string label() const { return "P " + prefill.label() + " / D " + decode.label(); }
  std::int64_t gpus(RoleCounts counts) const {
    return counts.prefill * prefill.gpus_per_replica() + counts.decode * decode.gpus_per_replica();
  }
};

std::vector<ConfigOverride> layout_overrides(const Layout& layout, RoleCounts counts) {
  std::vector<ConfigOverride> overrides;
  for (const auto& [role, shape, replicas] :
       {std::tuple{"prefill", &layout.prefill, counts.prefill},
        std::tuple{"decode", &layout.decode, counts.decode}}) {
    const std::string key = std::string("disaggregation.") + role + ".";
    overrides.push_back({"--disaggregated", key + "replicas=" + std::to_string(replicas)});
    overrides.push_back(
        {"--disaggregated", key + "hardware=" + nlohmann::json(shape->hardware).dump()});
    overrides.push_back({"--disaggregated", key + "tp=" + std::to_string(shape->tp)});
    overrides.push_back({"--disaggregated", key + "pp=" + std::to_string(shape->pp)});
  }
  return overrides;
}

std::string counts_text(RoleCounts counts) {
  return std::to_string(counts.prefill) + "p" + std::to_string(counts.decode) + "d";
}

// The terms of `target` on the given metrics only.
SloTarget terms_on(const SloTarget& target, const std::vector<std::string>& metrics) {
  SloTarget part;
  for (const auto& limit : target.limits) {
    if (std::find(metrics.begin(), metrics.end(), limit.metric) != metrics.end()) {
      part.limits.push_back(limit);
    }
  }
  return part;
}

// The mean prompt and output of the requests of an isolated run's summary.
struct MeanRequest {
  double prompt_tokens = 0;
  double output_tokens = 0;
};
std::optional<MeanRequest> mean_request(const nlohmann::json& alone) {
  if (does_not_fit(alone)) return std::nullopt;
  const double requests = summary_value(alone, "throughput_requests_per_s");
  if (!(requests > 0)) return std::nullopt;
  const double output = summary_value(alone, "throughput_output_tokens_per_s");
  const double total = summary_value(alone, "throughput_total_tokens_per_s");
  return MeanRequest{(total - output) / requests, output / requests};
}

double output_per_user(const nlohmann::json& summary) {
  const double tpot = summary_value(summary, "tpot_s.mean");
  return tpot > 0 ? 1 / tpot : 0.0;
}

// What --minimize ranks deployments by, smallest first.
std::tuple<double, double> rank_of(const LayoutDeployment& d, bool by_cost) {
  const double cost =
      d.prices ? d.prices->usd_per_million_tokens : std::numeric_limits<double>::infinity();
  const double gpus = static_cast<double>(d.gpus);
  return by_cost ? std::tuple{cost, gpus} : std::tuple{gpus, cost};
}

// A file name's part: the text's letters, digits and dots, each other run of characters one '-'.
std::string slug(const std::string& text) {
  std::string name;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.') {
      name += c;
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  return name;
}

}  // namespace

int search_layouts(CapacityStudy& study, const po::variables_map& vm) {
  const double rate = vm["target-rate"].as<double>();
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw UsageError("--target-rate: expected a positive number of requests/s");
  }
  const std::string minimize = vm["minimize"].as<std::string>();
  if (minimize != "gpus" && minimize != "cost") {
    throw UsageError("--minimize: expected gpus or cost, got \"" + minimize + "\"");
  }
  const bool by_cost = minimize == "cost";
  const nlohmann::json base =
      study_point_config(study.base, {}, study.context.data_root, "capacity");
  (void)configured_rate(base, "use --arrival poisson", "--start-rate");
  if (base.contains("disaggregation") && !base["disaggregation"].is_null()) {
    throw UsageError(
        "--disaggregated: the search lays the roles out from --shapes; drop the "
        "disaggregation section and flags (--disaggregation, --prefill-replicas, ...)");
  }
  const auto shapes =
      parse_shapes(vm.count("shapes") != 0 ? vm["shapes"].as<std::string>() : "", base);
  const auto max_replicas = vm["max-replicas"].as<std::int64_t>();
  const auto price_of = [&](const ReplicaShape& shape) {
    return price_per_gpu_hour(shape, vm, study.context);
  };
  // A layout's GPUs' cost per hour, each role at its shape's price; none without both prices.
  const auto usd_per_hour = [&](const Layout& layout, RoleCounts counts) -> std::optional<double> {
    const auto prefill = price_of(layout.prefill);
    const auto decode = price_of(layout.decode);
    if (!prefill || !decode) return std::nullopt;
    return *prefill * static_cast<double>(counts.prefill * layout.prefill.gpus_per_replica()) +
           *decode * static_cast<double>(counts.decode * layout.decode.gpus_per_replica());
  };

  // Every shape's requests alone: the bounds of both kinds, and the mean request.
  std::vector<std::vector<ConfigOverride>> shape_sets;
  std::vector<std::string> probe_names;
  for (const auto& shape : shapes) {
    shape_sets.push_back(shape_overrides(shape, "--shapes"));
    probe_names.push_back("capacity bound (" + shape.label() + ")");
  }
  const std::vector<nlohmann::json> alone = study.alone(shape_sets, probe_names);
  std::optional<MeanRequest> mean;
  for (const auto& summary : alone) {
    if (!mean) mean = mean_request(summary);
  }

  // The aggregated shapes, searched as `capacity --target-rate` searches them.
  std::vector<ReplicaShape> searched;
  std::vector<std::optional<std::string>> aggregated_unreachable;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    aggregated_unreachable.push_back(unreachable(study.slo, alone[s]));
    if (!aggregated_unreachable.back()) searched.push_back(shapes[s]);
  }
  const auto aggregated = search_shape_replicas(study, searched, rate, max_replicas);

  std::vector<LayoutDeployment> deployments;
  std::vector<std::size_t> aggregated_rows;  // deployments' index of each searched shape
  {
    std::size_t next = 0;
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      LayoutDeployment& d = deployments.emplace_back();
      d.kind = "aggregated";
      d.label = shapes[s].label();
      d.json = {{"kind", d.kind},
                {"hardware", shapes[s].hardware},
                {"tp", shapes[s].tp},
                {"pp", shapes[s].pp},
                {"replicas", nullptr}};
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
      aggregated_rows.push_back(deployments.size() - 1);
      const ReplicaPoint* answer = result.answer();
      if (answer == nullptr) {
        const ReplicaPoint& last = result.points.back();
        d.note = (last.verdict.fails_at_any_load
                      ? ""
                      : "more than " + std::to_string(max_replicas) + " replicas: ") +
                 violations_text(last.verdict);
        continue;
      }
      d.counts = std::to_string(answer->replicas);
      d.gpus = answer->replicas * shapes[s].gpus_per_replica();
      d.summary = &answer->summary;
      if (const auto price = price_of(shapes[s])) {
        d.prices = serving_prices(*price, d.gpus, rate, answer->summary);
      }
      d.json["replicas"] = answer->replicas;
      d.json["gpus"] = d.gpus;
      if (d.prices) d.json.update(serving_prices_json(*d.prices));
    }
  }
  // The best aggregated answer, copied: `deployments` grows below.
  std::optional<LayoutDeployment> best_aggregated;
  for (const LayoutDeployment& d : deployments) {
    if (d.summary &&
        (!best_aggregated || rank_of(d, by_cost) < rank_of(*best_aggregated, by_cost))) {
      best_aggregated = d;
    }
  }

  // The layouts: every pair of shapes, rate-matched, pruned, then searched.
  const SloTarget prefill_terms = terms_on(study.slo, {"ttft"});
  const SloTarget decode_terms = terms_on(study.slo, {"tpot", "itl"});
  std::optional<double> step_limit_s;
  for (const auto& limit : decode_terms.limits) {
    step_limit_s = std::min(limit.limit_s, step_limit_s.value_or(limit.limit_s));
  }
  std::vector<Layout> layouts;
  std::vector<std::size_t> layout_rows;  // deployments' index of each layout searched
  std::vector<RoleCounts> starts;
  for (std::size_t p = 0; p < shapes.size(); ++p) {
    for (std::size_t q = 0; q < shapes.size(); ++q) {
      const Layout layout{shapes[p], shapes[q]};
      LayoutDeployment& d = deployments.emplace_back();
      d.kind = "disaggregated";
      d.label = layout.label();
      d.json = {{"kind", d.kind},
                {"prefill",
                 {{"hardware", layout.prefill.hardware},
                  {"tp", layout.prefill.tp},
                  {"pp", layout.prefill.pp},
                  {"replicas", nullptr}}},
                {"decode",
                 {{"hardware", layout.decode.hardware},
                  {"tp", layout.decode.tp},
                  {"pp", layout.decode.pp},
                  {"replicas", nullptr}}}};
      // Out of reach at any load: a prompt alone on the prefill shape misses TTFT, a
      // request alone on the decode shape misses TPOT or ITL.
      std::optional<std::string> reason = unreachable(prefill_terms, alone[p]);
      if (!reason) reason = unreachable(decode_terms, alone[q]);
      if (!reason && !mean) reason = "no shape serves the workload's requests alone";
      RoleCounts start;
      if (!reason) {
        // Rate matching, on the roles as a 1p1d run of the layout configures them.
        const nlohmann::json config =
            study_point_config(study.base, layout_overrides(layout, {1, 1}),
                               study.context.data_root, "capacity layout (" + d.label + ")");
        const RoleLoad load{mean->prompt_tokens, mean->output_tokens, step_limit_s};
        try {
          const auto& roles = config["disaggregation"];
          const RoleThroughput prefill = role_throughput(role_document(config, roles["prefill"]),
                                                         study.context.data_root, load);
          const RoleThroughput decode = role_throughput(role_document(config, roles["decode"]),
                                                        study.context.data_root, load);
          start = rate_matched_counts(rate, mean->prompt_tokens, mean->output_tokens,
                                      prefill.prefill_tokens_per_s, decode.decode_tokens_per_s);
          d.json["rate_matching"] = {
              {"prefill_tokens_per_s_per_replica", prefill.prefill_tokens_per_s},
              {"decode_tokens_per_s_per_replica", decode.decode_tokens_per_s},
              {"decode_batch", decode.decode_batch},
              {"decode_step_s", decode.decode_step_s},
              {"prefill_replicas", start.prefill},
              {"decode_replicas", start.decode}};
        } catch (const InfeasibleError& e) {
          reason = unfit_text(unfit_result(e));
        }
      }
      if (!reason && std::max(start.prefill, start.decode) > max_replicas) {
        reason = "rate matching needs " + counts_text(start) + ", more than --max-replicas " +
                 std::to_string(max_replicas);
      }
      if (!reason && best_aggregated) {
        // The rate-matched counts are the fewest that can serve the rate (upper bounds of
        // throughput): a layout whose fewest GPUs (or $/hour) already exceed the best
        // aggregated answer's cannot beat it.
        const std::int64_t gpus = layout.gpus(start);
        const std::optional<double> cost = usd_per_hour(layout, start);
        const bool priced = cost && best_aggregated->prices;
        if (!by_cost && gpus > best_aggregated->gpus) {
          reason = "pruned: rate matching needs " + counts_text(start) + ", " +
                   std::to_string(gpus) + " GPUs, more than the best aggregated answer's " +
                   std::to_string(best_aggregated->gpus);
        } else if (by_cost && priced && *cost > best_aggregated->prices->usd_per_hour) {
          reason = "pruned: rate matching needs " + counts_text(start) + ", $" +
                   format_fixed(*cost, 2) + "/hour, more than the best aggregated " + "answer's $" +
                   format_fixed(best_aggregated->prices->usd_per_hour, 2);
        }
      }
      if (reason) {
        d.note = *reason;
        d.json["skipped"] = d.note;
        continue;
      }
      layouts.push_back(layout);
      layout_rows.push_back(deployments.size() - 1);
      starts.push_back(start);
    }
  }
  // Every deployment meeting the SLO serves the target rate: its output tokens/s per GPU are
  // the rate's over its GPUs (a window's measured throughput would rank equal deployments by
  // their noise).
  const double output_per_s = mean ? rate * mean->output_tokens : 0.0;
  const auto output_per_gpu = [&](std::int64_t gpus) {
    return output_per_s / static_cast<double>(gpus);
  };
  const auto point_overrides = [&](const Layout& layout, RoleCounts counts) {
    auto overrides = layout_overrides(layout, counts);
    overrides.push_back(rate_override(rate));
    return overrides;
  };
  const auto results = search_fewest_layouts(
      study.slo, starts, max_replicas, [&](const std::vector<LayoutTrial>& trials) {
        std::vector<std::vector<ConfigOverride>> overrides;
        std::vector<std::string> names;
        for (const auto& trial : trials) {
          const Layout& layout = layouts[trial.layout];
          overrides.push_back(point_overrides(layout, trial.counts));
          names.push_back("capacity point (" + layout.label() + ", " + counts_text(trial.counts) +
                          ")");
        }
        return study.run(overrides, names);
      });
  if (!study.context.processes.leader()) return 0;

  for (std::size_t l = 0; l < layouts.size(); ++l) {
    LayoutDeployment& d = deployments[layout_rows[l]];
    const Layout& layout = layouts[l];
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
                    : "more than " + std::to_string(max_replicas) + " replicas per role: ") +
               violations_text(last.verdict);
      continue;
    }
    d.counts = counts_text(answer->counts);
    d.gpus = layout.gpus(answer->counts);
    d.summary = &answer->summary;
    if (const auto cost = usd_per_hour(layout, answer->counts)) {
      // The GPUs' mean price, so that the deployment's $/hour is each role's.
      d.prices = serving_prices(*cost / static_cast<double>(d.gpus), d.gpus, rate, answer->summary);
    }
    d.json["prefill"]["replicas"] = answer->counts.prefill;
    d.json["decode"]["replicas"] = answer->counts.decode;
    d.json["gpus"] = d.gpus;
    if (d.prices) d.json.update(serving_prices_json(*d.prices));
  }

  // Every point evaluated, in order, and the Pareto front of those meeting the SLO.
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
           replica_point_overrides(shape, rate, point.replicas),
           {"aggregated", shape.hardware, std::to_string(shape.tp), std::to_string(shape.pp),
            std::to_string(point.replicas), "", "", "", ""}});
    }
  }
  for (std::size_t l = 0; l < layouts.size(); ++l) {
    const Layout& layout = layouts[l];
    for (const auto& point : results[l].points) {
      evaluated.push_back(
          {layout.label(),
           counts_text(point.counts),
           layout.gpus(point.counts),
           &point.summary,
           &point.verdict,
           point_overrides(layout, point.counts),
           {"disaggregated", layout.prefill.hardware, std::to_string(layout.prefill.tp),
            std::to_string(layout.prefill.pp), std::to_string(point.counts.prefill),
            layout.decode.hardware, std::to_string(layout.decode.tp),
            std::to_string(layout.decode.pp), std::to_string(point.counts.decode)}});
    }
  }
  std::vector<std::size_t> meeting;
  std::vector<FrontCandidate> candidates;
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    if (!evaluated[i].verdict->met) continue;
    meeting.push_back(i);
    candidates.push_back(
        {output_per_gpu(evaluated[i].gpus), output_per_user(*evaluated[i].summary)});
  }
  const bool write_configs = study_out_dir(vm).has_value();
  std::vector<std::pair<std::string, std::string>> config_files;
  nlohmann::json front_json = nlohmann::json::array();
  Table front_table({"deployment", "replicas", "GPUs", "tok/s/GPU", "tok/s/user", "TTFT p99 ms",
                     "TPOT p99 ms", "config"},
                    {0, 7});
  for (const std::size_t c : pareto_front(candidates)) {
    const SearchedPoint& e = evaluated[meeting[c]];
    const std::string file = "front/" + std::to_string(front_json.size() + 1) + "-" +
                             slug(e.label + " " + e.counts) + ".json";
    if (write_configs) {
      const nlohmann::json config =
          study_point_config(study.base, e.overrides, study.context.data_root, e.label);
      config_files.emplace_back(file, config.dump(2) + "\n");
    }
    front_json.push_back({{"deployment", e.label},
                          {"replicas", e.counts},
                          {"gpus", e.gpus},
                          {"output_tokens_per_s_per_gpu", candidates[c].per_gpu},
                          {"output_tokens_per_s_per_user", candidates[c].per_user},
                          {"config", write_configs ? nlohmann::json(file) : nlohmann::json()}});
    front_table.add_row({e.label, e.counts, std::to_string(e.gpus),
                         format_fixed(candidates[c].per_gpu, 1),
                         format_fixed(candidates[c].per_user, 1),
                         format_fixed(summary_value(*e.summary, "ttft_s.p99") * 1e3, 1),
                         format_fixed(summary_value(*e.summary, "tpot_s.p99") * 1e3, 2),
                         write_configs ? file : "-"});
  }

  for (LayoutDeployment& d : deployments) {
    if (!d.summary) continue;
    d.output_per_gpu = output_per_gpu(d.gpus);
    d.output_per_user = output_per_user(*d.summary);
  }

  // The best of each kind.
  const auto best_of = [&](const std::string& kind) -> const LayoutDeployment* {
    const LayoutDeployment* best = nullptr;
    for (const LayoutDeployment& d : deployments) {
      if (d.kind == kind && d.summary && (!best || rank_of(d, by_cost) < rank_of(*best, by_cost))) {
        best = &d;
      }
    }
    return best;
  };
  nlohmann::json best_json = nlohmann::json::object();
  nlohmann::json deployments_json = nlohmann::json::array();
  for (const LayoutDeployment& d : deployments)
    deployments_json.push_back(d.json);
  for (const std::string kind : {"aggregated", "disaggregated"}) {
    const LayoutDeployment* best = best_of(kind);
    best_json[kind] = best ? best->json : nlohmann::json();
  }
  const nlohmann::json document{{"command", "capacity"},
                                {"mode", "layouts"},
                                {"slo", slo_json(study.slo)},
                                {"target_rate_per_s", rate},
                                {"max_replicas", max_replicas},
                                {"minimize", minimize},
                                {"deployments", deployments_json},
                                {"best", best_json},
                                {"front", front_json}};
  CapacityPoints points;
  points.keys = {"kind",      "hardware",  "tp",
                 "pp",        "replicas",  "decode_hardware",
                 "decode_tp", "decode_pp", "decode_replicas"};
  points.x_label = "GPUs";
  for (const SearchedPoint& e : evaluated)
    points.add(e.keys, *e.summary, *e.verdict, static_cast<double>(e.gpus));
  publish_capacity(study, vm, points, document, config_files);

  const bool any = best_of("aggregated") || best_of("disaggregated");
  if (vm.count("json") != 0) {
    study.context.out << document.dump(2) << '\n';
  } else {
    print_layouts_report(study.context.out, {rate,
                                             by_cost,
                                             deployments,
                                             evaluated,
                                             {best_of("aggregated"), best_of("disaggregated")},
                                             {!searched.empty(), !layouts.empty()},
                                             front_table,
                                             !front_json.empty(),
                                             write_configs});
  }
  if (!any) {
    study.context.err << "servesim: error: no deployment meets the SLO at " << rate_text(rate)
                      << " req/s with up to " << max_replicas << " replicas per role\n";
    return exit_code_for(ErrorKind::Infeasible);
  }
  return 0;
}

}  // namespace servesim::cli
