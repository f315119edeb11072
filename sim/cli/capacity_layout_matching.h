#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/capacity_layouts.h"
#include "sim/cli/capacity_study.h"
#include "sim/study/layout_search.h"
#include "sim/study/replica_search.h"

namespace servesim::cli {

// A disaggregated layout: the shape of each role's replicas.
struct Layout {
  ReplicaShape prefill;
  ReplicaShape decode;
  std::string label() const { return "P " + prefill.label() + " / D " + decode.label(); }
  std::int64_t gpus(RoleCounts counts) const {
    return counts.prefill * prefill.gpus_per_replica() + counts.decode * decode.gpus_per_replica();
  }
};

std::vector<ConfigOverride> layout_overrides(const Layout& layout, RoleCounts counts);
std::string counts_text(RoleCounts counts);

// A layout's GPUs' cost per hour, each role at its shape's price; none without both prices.
std::optional<double> layout_usd_per_hour(const Layout& layout, RoleCounts counts,
                                          const po::variables_map& vm,
                                          const CommandContext& context);

// The mean prompt and output of the requests of an isolated run's summary.
struct MeanRequest {
  double prompt_tokens = 0;
  double output_tokens = 0;
};
std::optional<MeanRequest> mean_request(const nlohmann::json& alone);

// What `capacity --disaggregated` searches: the target rate, what --minimize ranks by, the
// most replicas of each role and the shapes.
struct LayoutSearchTerms {
  double rate_per_s = 0;
  std::string minimize;  // "gpus" or "cost"
  bool by_cost = false;
  std::int64_t max_replicas = 0;
  std::vector<ReplicaShape> shapes;
};

// The layouts a search simulates, each with its deployments' row and its rate-matched counts.
struct MatchedLayouts {
  std::vector<Layout> layouts;
  std::vector<std::size_t> rows;  // deployments' index of each layout searched
  std::vector<RoleCounts> starts;
};
// The layouts: every pair of shapes, rate-matched, pruned. Each pair's deployment is added to
// `deployments`, with why the search skips it when it does; `alone` holds each shape's
// requests alone, and `best_aggregated` the best aggregated answer, if any.
MatchedLayouts match_layouts(const CapacityStudy& study, const po::variables_map& vm,
                             const LayoutSearchTerms& terms,
                             const std::vector<nlohmann::json>& alone,
                             const std::optional<MeanRequest>& mean,
                             const std::optional<LayoutDeployment>& best_aggregated,
                             std::vector<LayoutDeployment>& deployments);

}  // namespace servesim::cli
