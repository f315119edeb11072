#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/study/capacity_search.h"
#include "sim/study/layout_search.h"
#include "sim/study/replica_search.h"
#include "sim/study/serving_prices.h"
#include "sim/study/slo.h"

namespace servesim {

// The layout search of `capacity --disaggregated` and of Python's capacity(disaggregated=True):
// each shape aggregated, every prefill/decode pair of shapes rate-matched, pruned and
// searched, the best of each kind and the Pareto front of the points meeting the SLO.

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

// What the search takes: the target rate, what to minimize ("gpus" or "cost", GPUs breaking
// ties of cost and the other way round), the most replicas of each role, the shapes and the
// price per GPU-hour of a shape that has none of its own (else its profile's).
struct LayoutSearchTerms {
  double rate_per_s = 0;
  std::string minimize = "gpus";
  bool by_cost = false;
  std::int64_t max_replicas = 0;
  std::vector<ReplicaShape> shapes;
  std::optional<double> gpu_cost_per_hour;
};

// A layout's GPUs' cost per hour, each role at its shape's price; none without both prices.
std::optional<double> layout_usd_per_hour(const Layout& layout, RoleCounts counts,
                                          const LayoutSearchTerms& terms,
                                          const std::filesystem::path& data_root);

// The mean prompt and output of the requests of an isolated run's summary.
struct MeanRequest {
  double prompt_tokens = 0;
  double output_tokens = 0;
};
std::optional<MeanRequest> mean_request(const nlohmann::json& alone);

// One deployment of the answer: an aggregated shape's fewest replicas, or a layout's fewest
// per role; or why there is none.
struct LayoutDeployment {
  std::string kind;  // "aggregated" or "disaggregated"
  std::string label;
  std::string counts;  // "3" or "2p1d"
  std::int64_t gpus = 0;
  const nlohmann::json* summary = nullptr;  // the answer's point, when there is one
  std::optional<ServingPrices> prices;
  double output_per_gpu = 0;   // output tokens/s per GPU at the target rate
  double output_per_user = 0;  // 1 / mean TPOT
  std::string note;
  nlohmann::json json;  // its entry in summary.json
};

// One point the search simulated, as its rows (table, capacity.csv) and front show it.
struct SearchedPoint {
  std::string label;
  std::string counts;
  std::int64_t gpus = 0;
  const nlohmann::json* summary = nullptr;
  const SloVerdict* verdict = nullptr;
  std::vector<ConfigOverride> overrides;
  std::vector<std::string> keys;  // capacity.csv's key cells
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
MatchedLayouts match_layouts(const CapacitySearch& search, const LayoutSearchTerms& terms,
                             const std::vector<nlohmann::json>& alone,
                             const std::optional<MeanRequest>& mean,
                             const std::optional<LayoutDeployment>& best_aggregated,
                             std::vector<LayoutDeployment>& deployments);

// Output tokens/s per user of a point's summary: 1 / mean TPOT, 0 without a TPOT.
double output_per_user(const nlohmann::json& summary);

// A point of the Pareto front of the points meeting the SLO, by output tokens/s per GPU and
// per user, with its runnable configuration's file name and text when asked for.
struct LayoutFrontPoint {
  const SearchedPoint* point = nullptr;
  double output_per_gpu = 0;
  double output_per_user = 0;
  std::string config_file;  // "front/1-....json"; empty when not written
};
struct LayoutFront {
  std::vector<LayoutFrontPoint> points;
  nlohmann::json json = nlohmann::json::array();
  std::vector<std::pair<std::string, std::string>> config_files;
};
LayoutFront layout_front(const CapacitySearch& search, const std::vector<SearchedPoint>& evaluated,
                         double output_per_s, bool write_configs);

// The whole search's answer. It owns the points its deployments and rows point into: move it,
// never copy it.
struct LayoutStudy {
  LayoutSearchTerms terms;
  std::vector<ReplicaShape> searched;  // the aggregated shapes searched
  std::vector<ReplicaSearchResult> aggregated;
  MatchedLayouts matched;
  std::vector<LayoutSearchResult> layouts;
  std::vector<LayoutDeployment> deployments;
  std::vector<SearchedPoint> evaluated;  // every point, in order
  LayoutFront front;
  std::array<const LayoutDeployment*, 2> best{};  // aggregated, disaggregated; null: none
  std::array<bool, 2> searched_any{};             // whether any of each kind was searched
  nlohmann::json document;                        // summary.json

  LayoutStudy() = default;
  LayoutStudy(const LayoutStudy&) = delete;
  LayoutStudy& operator=(const LayoutStudy&) = delete;
  LayoutStudy(LayoutStudy&&) = default;
  LayoutStudy& operator=(LayoutStudy&&) = default;
};
// Runs the search; `write_configs` asks for each front point's configuration file.
LayoutStudy search_layout_study(CapacitySearch& search, const LayoutSearchTerms& terms,
                                bool write_configs);

}  // namespace servesim
