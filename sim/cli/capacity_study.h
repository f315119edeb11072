#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/command.h"
#include "sim/cli/format.h"
#include "sim/cli/options.h"
#include "sim/study/point_simulation.h"
#include "sim/study/progress_meter.h"
#include "sim/study/replica_search.h"
#include "sim/study/serving_prices.h"
#include "sim/study/slo.h"

namespace servesim::cli {

// What a capacity study shares between its modes.
struct CapacityStudy {
  const CommandContext& context;
  ConfigSources base;
  SloTarget slo;
  IPointExecutor& executor;
  ProgressMeter& progress;
  PointMeasure measure;
  PointJournal* journal = nullptr;  // with --out or --resume

  // Runs one round of points, each the base configuration plus its overrides.
  std::vector<nlohmann::json> run(const std::vector<std::vector<ConfigOverride>>& overrides,
                                  const std::vector<std::string>& names);
  // For each set of overrides, the summary of the workload's requests served one at a time
  // (slo_bounds.h's isolated_summary).
  std::vector<nlohmann::json> alone(const std::vector<std::vector<ConfigOverride>>& overrides,
                                    const std::vector<std::string>& names);
  // For each set of overrides, why the SLO is out of reach at any load (slo_bounds.h), from
  // alone(); nothing when it may be reachable.
  std::vector<std::optional<std::string>> unreachable(
      const std::vector<std::vector<ConfigOverride>>& overrides,
      const std::vector<std::string>& names);
};

std::string rate_text(double rate_per_s);
ConfigOverride rate_override(double rate_per_s);
std::vector<ConfigOverride> shape_overrides(const ReplicaShape& shape, const std::string& origin);

nlohmann::json verdict_json(const SloVerdict& verdict);
std::string violations_text(const SloVerdict& verdict);
nlohmann::json slo_json(const SloTarget& slo);

// The columns every point's row has after its key columns, and their cells: steady-state
// req/s, offered req/s, served share, latencies, the stability and SLO verdicts.
extern const std::vector<std::string> kPointColumns;
void add_point_cells(std::vector<std::string>& cells, const nlohmann::json& summary,
                     const SloVerdict& verdict);

// The points a capacity search simulated, in order, as capacity.csv and its figure show them.
struct CapacityPoints {
  std::vector<std::string> keys;                    // the key columns' names
  std::vector<std::vector<std::string>> key_cells;  // a row of key cells per point
  std::vector<const nlohmann::json*> summaries;
  std::vector<const SloVerdict*> verdicts;
  std::vector<double> x;  // per point, the searched quantity the figure's x axis shows
  std::string x_label;    // "offered rate (requests/s)" or "GPUs"

  void add(std::vector<std::string> cells, const nlohmann::json& summary, const SloVerdict& verdict,
           double x_value);
};

// capacity.csv: the points with their key cells and every metric.
std::string points_csv(const CapacityPoints& points);
// Writes capacity.csv, its figure (capacity_plots.h; drawn unless --no-plots), summary.json,
// command.json and `files` (relative paths and their text) into --out (or --resume's
// folder), when given.
void publish_capacity(const CapacityStudy& study, const po::variables_map& vm,
                      const CapacityPoints& points, const nlohmann::json& document,
                      const std::vector<std::pair<std::string, std::string>>& files = {});

// --shapes HARDWARE[:TP[:PP]][@PRICE],...; the configured shape when `list` is empty.
std::vector<ReplicaShape> parse_shapes(const std::string& list, const nlohmann::json& base);
// The shape's own price, else --gpu-cost-per-hour, else the profile's list price.
std::optional<double> price_per_gpu_hour(const ReplicaShape& shape, const po::variables_map& vm,
                                         const CommandContext& context);
// "$/hour", "$/M input", "$/M output", "$/M tokens", "$/1k requests" and their cells.
extern const std::vector<std::string> kPriceColumns;
std::vector<std::string> price_cells(const std::optional<ServingPrices>& prices);

// A point of a replica search: the shape, the rate and the count.
std::vector<ConfigOverride> replica_point_overrides(const ReplicaShape& shape, double rate_per_s,
                                                    std::int64_t replicas);
// The fewest replicas of each shape meeting the study's SLO at `rate_per_s`
// (search_fewest_replicas, its points run by the study).
std::vector<ReplicaSearchResult> search_shape_replicas(CapacityStudy& study,
                                                       const std::vector<ReplicaShape>& shapes,
                                                       double rate_per_s,
                                                       std::int64_t max_replicas);

// --target-rate: the fewest replicas of each shape meeting the SLO.
int search_replicas(CapacityStudy& study, const po::variables_map& vm);
// --target-rate with --disaggregated: the same, and the fewest replicas per role of each
// prefill/decode pair of shapes; the best of each kind and the Pareto front.
int search_layouts(CapacityStudy& study, const po::variables_map& vm);

}  // namespace servesim::cli
