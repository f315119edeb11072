#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/study/point_simulation.h"
#include "sim/study/progress_meter.h"
#include "sim/study/rate_search.h"
#include "sim/study/replica_search.h"
#include "sim/study/slo.h"

namespace servesim {

// What a capacity search runs its points with, whoever asks (the CLI's `capacity`, the
// Python module's capacity()): the base configuration, the SLO, where the points run and
// what each measures.
struct CapacitySearch {
  ConfigSources base;
  SloTarget slo;
  IPointExecutor& executor;
  std::filesystem::path data_root;
  std::filesystem::path working_dir;
  ProgressMeter* progress = nullptr;  // none: no progress shown
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

ConfigOverride rate_override(double rate_per_s);
std::vector<ConfigOverride> shape_overrides(const ReplicaShape& shape, const std::string& origin);
// A point of a replica search: the shape, the rate and the count; errors in the shape name
// `shapes_origin` (the flag or keyword that gave the shapes).
std::vector<ConfigOverride> replica_point_overrides(const ReplicaShape& shape, double rate_per_s,
                                                    std::int64_t replicas,
                                                    const std::string& shapes_origin = "--shapes");
// The fewest replicas of each shape meeting the search's SLO at `rate_per_s`
// (search_fewest_replicas, its points run by the search).
std::vector<ReplicaSearchResult> search_shape_replicas(
    CapacitySearch& search, const std::vector<ReplicaShape>& shapes, double rate_per_s,
    std::int64_t max_replicas, const std::string& shapes_origin = "--shapes");

// The highest rate meeting the search's SLO (search_highest_rate), each point the base
// configuration plus `overrides` (a shape's; none for the configured deployment) and its rate,
// named "capacity point (LABEL, rate=R)", or "capacity point (rate=R)" without a label.
RateSearchResult search_rate_with(CapacitySearch& search,
                                  const std::vector<ConfigOverride>& overrides,
                                  const std::string& label, const RateSearchOptions& options);

// A shape's price per GPU-hour: its own, else `fallback_per_gpu_hour` (--gpu-cost-per-hour),
// else its hardware profile's list price; none without any.
std::optional<double> price_per_gpu_hour(const ReplicaShape& shape,
                                         std::optional<double> fallback_per_gpu_hour,
                                         const std::filesystem::path& data_root);

nlohmann::json verdict_json(const SloVerdict& verdict);
// The verdict's violations joined with "; ", or "-" when there are none.
std::string violations_text(const SloVerdict& verdict);
nlohmann::json slo_json(const SloTarget& slo);

}  // namespace servesim
