#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/command.h"
#include "sim/cli/format.h"
#include "sim/cli/options.h"
#include "sim/study/capacity_search.h"
#include "sim/study/point_simulation.h"
#include "sim/study/progress_meter.h"
#include "sim/study/replica_search.h"
#include "sim/study/serving_prices.h"
#include "sim/study/slo.h"

namespace servesim::cli {

// What a capacity study shares between its modes: the search (sim/study/capacity_search.h)
// and the command it answers.
struct CapacityStudy : CapacitySearch {
  const CommandContext& context;
};

std::string rate_text(double rate_per_s);

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

// One shape's points (its summaries, in order), for telling whether any shape fits or starts.
struct ShapePoints {
  std::string label;
  std::vector<const nlohmann::json*> summaries;
};
// "SHAPE: why; SHAPE: why" when every shape has points and none of them fits or starts (its
// last point says why); none otherwise: then some shape fits, or one was not simulated.
std::optional<std::string> no_shape_fits(const std::vector<ShapePoints>& shapes);
// What capacity does then, as `sweep` does when no point fits: nothing published, the journal
// finished, one error line with each shape's reason; returns the exit code.
int refuse_unfit_shapes(const CapacityStudy& study, const std::string& reasons);

// --shapes HARDWARE[:TP[:PP]][@PRICE],...; the configured shape when `list` is empty.
std::vector<ReplicaShape> parse_shapes(const std::string& list, const nlohmann::json& base);
// --gpu-cost-per-hour, when given.
std::optional<double> gpu_cost_flag(const po::variables_map& vm);
// The shape's own price, else --gpu-cost-per-hour, else the profile's list price.
std::optional<double> price_per_gpu_hour(const ReplicaShape& shape, const po::variables_map& vm,
                                         const CommandContext& context);
// "$/hour", "$/M input", "$/M output", "$/M tokens", "$/1k requests" and their cells.
extern const std::vector<std::string> kPriceColumns;
std::vector<std::string> price_cells(const std::optional<ServingPrices>& prices);

// --target-rate: the fewest replicas of each shape meeting the SLO.
int search_replicas(CapacityStudy& study, const po::variables_map& vm);
// --target-rate with --disaggregated: the same, and the fewest replicas per role of each
// prefill/decode pair of shapes; the best of each kind and the Pareto front.
int search_layouts(CapacityStudy& study, const po::variables_map& vm);

}  // namespace servesim::cli
