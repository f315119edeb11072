#include "sim/study/capacity_search.h"

#include <algorithm>

#include "sim/config/catalog.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/slo_bounds.h"

namespace servesim {

std::vector<nlohmann::json> CapacitySearch::run(
    const std::vector<std::vector<ConfigOverride>>& overrides,
    const std::vector<std::string>& names) {
  return simulate_points(base, overrides, names, executor, data_root, working_dir, progress,
                         measure, journal);
}

std::vector<nlohmann::json> CapacitySearch::alone(
    const std::vector<std::vector<ConfigOverride>>& overrides,
    const std::vector<std::string>& names) {
  std::vector<nlohmann::json> configs;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    configs.push_back(study_point_config(base, overrides[i], data_root, names[i]));
    keys.push_back(PointJournal::key("alone", configs.back()));
    check_point_inputs(configs.back(), data_root, working_dir, names[i]);
  }
  if (progress != nullptr) progress->expect(configs.size());
  const auto summaries = evaluate_journaled(
      executor, keys,
      [&](std::size_t i) {
        const auto& workload = configs[i]["workload"];
        std::int64_t requests = std::max<std::int64_t>(1000, 2 * measure.window_completions);
        if (workload.contains("num_requests") && workload["num_requests"].is_number_integer()) {
          requests = std::min(requests, workload["num_requests"].get<std::int64_t>());
        }
        return isolated_summary(configs[i], requests, data_root, working_dir, names[i] + " alone");
      },
      progress, journal);
  return summaries;
}

std::vector<std::optional<std::string>> CapacitySearch::unreachable(
    const std::vector<std::vector<ConfigOverride>>& overrides,
    const std::vector<std::string>& names) {
  std::vector<std::optional<std::string>> reasons;
  for (const auto& summary : alone(overrides, names))
    reasons.push_back(servesim::unreachable(slo, summary));
  return reasons;
}

ConfigOverride rate_override(double rate_per_s) {
  return {"capacity", "workload.arrival.rate_per_s=" + nlohmann::json(rate_per_s).dump()};
}

std::vector<ConfigOverride> shape_overrides(const ReplicaShape& shape, const std::string& origin) {
  return {{origin, "hardware=" + nlohmann::json(shape.hardware).dump()},
          {origin, "tp=" + std::to_string(shape.tp)},
          {origin, "pp=" + std::to_string(shape.pp)}};
}

std::vector<ConfigOverride> replica_point_overrides(const ReplicaShape& shape, double rate_per_s,
                                                    std::int64_t replicas,
                                                    const std::string& shapes_origin) {
  auto overrides = shape_overrides(shape, shapes_origin);
  overrides.push_back(rate_override(rate_per_s));
  overrides.push_back({"capacity", "replicas=" + std::to_string(replicas)});
  return overrides;
}

std::vector<ReplicaSearchResult> search_shape_replicas(CapacitySearch& search,
                                                       const std::vector<ReplicaShape>& shapes,
                                                       double rate_per_s, std::int64_t max_replicas,
                                                       const std::string& shapes_origin) {
  return search_fewest_replicas(
      search.slo, shapes, max_replicas, [&](const std::vector<ReplicaTrial>& trials) {
        std::vector<std::vector<ConfigOverride>> overrides;
        std::vector<std::string> names;
        for (const auto& trial : trials) {
          const auto& shape = shapes[trial.shape];
          overrides.push_back(
              replica_point_overrides(shape, rate_per_s, trial.replicas, shapes_origin));
          names.push_back("capacity point (" + shape.label() + ", " +
                          std::to_string(trial.replicas) + " replicas)");
        }
        return search.run(overrides, names);
      });
}

RateSearchResult search_rate_with(CapacitySearch& search,
                                  const std::vector<ConfigOverride>& overrides,
                                  const std::string& label, const RateSearchOptions& options) {
  return search_highest_rate(search.slo, options, [&](const std::vector<double>& rates) {
    std::vector<std::vector<ConfigOverride>> points;
    std::vector<std::string> names;
    for (const double rate : rates) {
      points.emplace_back(overrides).push_back(rate_override(rate));
      names.push_back("capacity point (" + (label.empty() ? "" : label + ", ") +
                      "rate=" + format_9_digits(rate) + ")");
    }
    return search.run(points, names);
  });
}

std::optional<double> price_per_gpu_hour(const ReplicaShape& shape,
                                         std::optional<double> fallback_per_gpu_hour,
                                         const std::filesystem::path& data_root) {
  if (shape.price_per_gpu_hour_usd) return shape.price_per_gpu_hour_usd;
  if (fallback_per_gpu_hour) return fallback_per_gpu_hour;
  const Catalog catalog(data_root / "hw_profiles", "hardware profile", "--shapes");
  return load_hardware_file(catalog.resolve(shape.hardware)).price_per_gpu_hour_usd;
}

nlohmann::json verdict_json(const SloVerdict& verdict) {
  return {{"met", verdict.met}, {"violations", verdict.violations}};
}

std::string violations_text(const SloVerdict& verdict) {
  std::string text;
  for (const auto& v : verdict.violations)
    text += (text.empty() ? "" : "; ") + v;
  return text.empty() ? "-" : text;
}

nlohmann::json slo_json(const SloTarget& slo) {
  nlohmann::json terms = nlohmann::json::array();
  for (const auto& limit : slo.limits)
    terms.push_back(limit.text());
  if (slo.attainment) terms.push_back("attainment >= " + format_9_digits(*slo.attainment));
  if (slo.plan_at_upper) terms.push_back("latencies at their error bands' upper edge");
  return terms;
}

}  // namespace servesim
