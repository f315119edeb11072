#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/capacity_study.h"
#include "sim/cli/format.h"
#include "sim/study/serving_prices.h"
#include "sim/study/slo.h"

namespace servesim::cli {

// One deployment of `capacity --disaggregated`'s answer: an aggregated shape's fewest
// replicas, or a layout's fewest per role; or why there is none.
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
  nlohmann::json json;
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

// Output tokens/s per user of a point's summary: 1 / mean TPOT, 0 without a TPOT.
double output_per_user(const nlohmann::json& summary);

// The Pareto front of the points meeting the SLO, by output tokens/s per GPU and per user:
// its table, its JSON and, when `write_configs`, each front point's configuration file.
struct LayoutFront {
  Table table;
  nlohmann::json json;
  std::vector<std::pair<std::string, std::string>> config_files;
};
LayoutFront layout_front(const CapacityStudy& study, const std::vector<SearchedPoint>& evaluated,
                         double output_per_s, bool write_configs);

// The console report of `capacity --disaggregated`: every point, the deployments, the best
// of each kind and the Pareto front.
struct LayoutReport {
  double rate_per_s = 0;
  bool by_cost = false;  // --minimize cost
  const std::vector<LayoutDeployment>& deployments;
  const std::vector<SearchedPoint>& points;
  std::array<const LayoutDeployment*, 2> best;  // aggregated, disaggregated; null: none
  std::array<bool, 2> searched_any;             // whether any of each kind was searched
  const Table& front;
  bool has_front = false;
  bool wrote_configs = false;
};
void print_layouts_report(std::ostream& out, const LayoutReport& report);

}  // namespace servesim::cli
