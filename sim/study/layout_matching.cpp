#include "sim/study/layout_study.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/config/disaggregation_config.h"
#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/slo_bounds.h"
#include "sim/study/summary_columns.h"

namespace servesim {
namespace {

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

// A layout's deployment before its search: the shape of each role, no replicas yet.
LayoutDeployment unsearched_layout_deployment(const Layout& layout) {
  LayoutDeployment d;
  d.kind = "disaggregated";
  d.label = layout.label();
  d.json = {{"kind", d.kind},
            {"deployment", d.label},
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
  return d;
}

// A layout's rate-matched counts, or why a role cannot be served.
struct RateMatchedStart {
  RoleCounts counts;
  std::optional<std::string> unservable;
};
RateMatchedStart rate_matched_start(const CapacitySearch& search, const Layout& layout,
                                    double rate_per_s, const MeanRequest& mean,
                                    std::optional<double> step_limit_s, LayoutDeployment& d) {
  RateMatchedStart start;
  // Rate matching, on the roles as a 1p1d run of the layout configures them.
  const nlohmann::json config =
      study_point_config(search.base, layout_overrides(layout, {1, 1}), search.data_root,
                         "capacity layout (" + d.label + ")");
  const RoleLoad load{mean.prompt_tokens, mean.output_tokens, step_limit_s};
  try {
    const auto& roles = config["disaggregation"];
    const RoleThroughput prefill =
        role_throughput(role_document(config, roles["prefill"]), search.data_root, load);
    const RoleThroughput decode =
        role_throughput(role_document(config, roles["decode"]), search.data_root, load);
    start.counts = rate_matched_counts(rate_per_s, mean.prompt_tokens, mean.output_tokens,
                                       prefill.prefill_tokens_per_s, decode.decode_tokens_per_s);
    d.json["rate_matching"] = {{"prefill_tokens_per_s_per_replica", prefill.prefill_tokens_per_s},
                               {"decode_tokens_per_s_per_replica", decode.decode_tokens_per_s},
                               {"decode_batch", decode.decode_batch},
                               {"decode_step_s", decode.decode_step_s},
                               {"prefill_replicas", start.counts.prefill},
                               {"decode_replicas", start.counts.decode}};
  } catch (const InfeasibleError& e) {
    start.unservable = unfit_text(unfit_result(e));
  }
  return start;
}

// Why the search prunes a layout that cannot beat the best aggregated answer; nothing when
// it may.
std::optional<std::string> pruned_reason(const LayoutSearchTerms& terms,
                                         const std::filesystem::path& data_root,
                                         const Layout& layout, RoleCounts start,
                                         const LayoutDeployment& best_aggregated) {
  const bool by_cost = terms.by_cost;
  // The rate-matched counts are the fewest that can serve the rate (upper bounds of
  // throughput): a layout whose fewest GPUs (or $/hour) already exceed the best
  // aggregated answer's cannot beat it.
  const std::int64_t gpus = layout.gpus(start);
  const std::optional<double> cost = layout_usd_per_hour(layout, start, terms, data_root);
  const bool priced = cost && best_aggregated.prices;
  if (!by_cost && gpus > best_aggregated.gpus) {
    return "pruned: rate matching needs " + counts_text(start) + ", " + std::to_string(gpus) +
           " GPUs, more than the best aggregated answer's " + std::to_string(best_aggregated.gpus);
  }
  if (by_cost && priced && *cost > best_aggregated.prices->usd_per_hour) {
    return "pruned: rate matching needs " + counts_text(start) + ", $" + format_fixed(*cost, 2) +
           "/hour, more than the best aggregated " + "answer's $" +
           format_fixed(best_aggregated.prices->usd_per_hour, 2);
  }
  return std::nullopt;
}

}  // namespace

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

std::optional<double> layout_usd_per_hour(const Layout& layout, RoleCounts counts,
                                          const LayoutSearchTerms& terms,
                                          const std::filesystem::path& data_root) {
  const auto prefill = price_per_gpu_hour(layout.prefill, terms.gpu_cost_per_hour, data_root);
  const auto decode = price_per_gpu_hour(layout.decode, terms.gpu_cost_per_hour, data_root);
  if (!prefill || !decode) return std::nullopt;
  return *prefill * static_cast<double>(counts.prefill * layout.prefill.gpus_per_replica()) +
         *decode * static_cast<double>(counts.decode * layout.decode.gpus_per_replica());
}

std::optional<MeanRequest> mean_request(const nlohmann::json& alone) {
  if (does_not_fit(alone)) return std::nullopt;
  const double requests = summary_value(alone, "throughput_requests_per_s");
  if (!(requests > 0)) return std::nullopt;
  const double output = summary_value(alone, "throughput_output_tokens_per_s");
  const double total = summary_value(alone, "throughput_total_tokens_per_s");
  return MeanRequest{(total - output) / requests, output / requests};
}

MatchedLayouts match_layouts(const CapacitySearch& search, const LayoutSearchTerms& terms,
                             const std::vector<nlohmann::json>& alone,
                             const std::optional<MeanRequest>& mean,
                             const std::optional<LayoutDeployment>& best_aggregated,
                             std::vector<LayoutDeployment>& deployments) {
  const SloTarget prefill_terms = terms_on(search.slo, {"ttft"});
  const SloTarget decode_terms = terms_on(search.slo, {"tpot", "itl"});
  std::optional<double> step_limit_s;
  for (const auto& limit : decode_terms.limits) {
    step_limit_s = std::min(limit.limit_s, step_limit_s.value_or(limit.limit_s));
  }
  const std::vector<ReplicaShape>& shapes = terms.shapes;
  MatchedLayouts matched;
  for (std::size_t p = 0; p < shapes.size(); ++p) {
    for (std::size_t q = 0; q < shapes.size(); ++q) {
      const Layout layout{shapes[p], shapes[q]};
      LayoutDeployment& d = deployments.emplace_back(unsearched_layout_deployment(layout));
      // Out of reach at any load: a prompt alone on the prefill shape misses TTFT, a
      // request alone on the decode shape misses TPOT or ITL.
      std::optional<std::string> reason = unreachable(prefill_terms, alone[p]);
      if (!reason) reason = unreachable(decode_terms, alone[q]);
      if (!reason && !mean) reason = "no shape serves the workload's requests alone";
      RoleCounts start;
      if (!reason) {
        const RateMatchedStart matching =
            rate_matched_start(search, layout, terms.rate_per_s, *mean, step_limit_s, d);
        start = matching.counts;
        reason = matching.unservable;
      }
      if (!reason && std::max(start.prefill, start.decode) > terms.max_replicas) {
        reason = "rate matching needs " + counts_text(start) + ", more than --max-replicas " +
                 std::to_string(terms.max_replicas);
      }
      if (!reason && best_aggregated) {
        reason = pruned_reason(terms, search.data_root, layout, start, *best_aggregated);
      }
      if (reason) {
        d.note = *reason;
        d.json["skipped"] = d.note;
        continue;
      }
      matched.layouts.push_back(layout);
      matched.rows.push_back(deployments.size() - 1);
      matched.starts.push_back(start);
    }
  }
  return matched;
}

}  // namespace servesim
