#include "sim/study/seed_replicates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "sim/core/error.h"
#include "sim/study/point_simulation.h"

namespace servesim {
namespace {

constexpr char kSeedAxis[] = "seed";

// Mean and 95% half-width of `values`.
std::pair<double, double> mean_ci(const std::vector<double>& values) {
  const auto n = static_cast<double>(values.size());
  double sum = 0;
  for (const double v : values)
    sum += v;
  const double mean = sum / n;
  double squares = 0;
  for (const double v : values)
    squares += (v - mean) * (v - mean);
  if (values.size() < 2) return {mean, 0};
  const double standard_error = std::sqrt(squares / (n - 1) / n);
  return {mean, student_t_95(static_cast<std::int64_t>(values.size()) - 1) * standard_error};
}

// A number (a bool counts 0 or 1) of every summary, or nothing when one lacks it.
std::optional<std::vector<double>> numbers(const std::vector<const nlohmann::json*>& nodes) {
  std::vector<double> out;
  for (const nlohmann::json* node : nodes) {
    if (node == nullptr) return std::nullopt;
    if (node->is_boolean()) {
      out.push_back(node->get<bool>() ? 1 : 0);
    } else if (node->is_number()) {
      out.push_back(node->get<double>());
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// The fold of one level: numbers become means with their "_ci95" beside them, objects (at the
// top level only, as sweep.csv flattens) fold key by key, anything else is the first seed's.
nlohmann::json fold(const std::vector<const nlohmann::json*>& summaries, bool top) {
  nlohmann::json out = nlohmann::json::object();
  for (auto it = summaries.front()->begin(); it != summaries.front()->end(); ++it) {
    std::vector<const nlohmann::json*> nodes;
    for (const nlohmann::json* s : summaries)
      nodes.push_back(s->contains(it.key()) ? &s->at(it.key()) : nullptr);
    if (const auto values = numbers(nodes)) {
      const auto [mean, ci] = mean_ci(*values);
      out[it.key()] = mean;
      out[it.key() + "_ci95"] = ci;
    } else if (top && it.value().is_object() &&
               std::all_of(nodes.begin(), nodes.end(), [](const nlohmann::json* n) {
                 return n != nullptr && n->is_object();
               })) {
      out[it.key()] = fold(nodes, false);
    } else {
      out[it.key()] = it.value();
    }
  }
  return out;
}

// A point is stable only if every seed is: the folded steady_state counts the stable seeds
// (`stable_seeds`), says why the others are not (`unstable`: "k of N seeds unstable: REASON",
// the first such seed's reason), is undecided only if no seed is decidedly unstable and one
// is undecided, and needs the most requests any undecided seed needs.
void fold_stability(nlohmann::json& folded, const std::vector<const nlohmann::json*>& summaries) {
  if (!folded.contains("steady_state") || !folded["steady_state"].is_object()) return;
  std::int64_t stable = 0;
  bool any_undecided = false, any_decided_unstable = false;
  std::int64_t requests_to_settle = 0;
  std::optional<std::string> first_reason;
  for (const nlohmann::json* summary : summaries) {
    const std::optional<std::string> reason = unstable(*summary);
    if (!reason) {
      ++stable;
      continue;
    }
    if (!first_reason) first_reason = reason;
    const nlohmann::json& steady = (*summary)["steady_state"];
    if (steady.value("undecided", false)) {
      any_undecided = true;
      requests_to_settle =
          std::max(requests_to_settle, steady.value("requests_to_settle", std::int64_t{0}));
    } else {
      any_decided_unstable = true;
    }
  }
  const auto n = static_cast<std::int64_t>(summaries.size());
  nlohmann::json& steady = folded["steady_state"];
  steady["stable_seeds"] = stable;
  steady.erase("unstable");
  if (first_reason) {
    steady["unstable"] = std::to_string(n - stable) + " of " + std::to_string(n) +
                         " seeds unstable: " + *first_reason;
  }
  steady["undecided"] = any_undecided && !any_decided_unstable;
  steady["requests_to_settle"] = steady["undecided"].get<bool>() ? requests_to_settle : 0;
}

}  // namespace

double student_t_95(std::int64_t degrees) {
  // Two-sided 95% (the 0.975 quantile), degrees of freedom 1 to 30; then the normal's 1.96
  // approached as 1.96 + 2.4 / degrees (within 0.2% of the exact value from 31 on).
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (degrees < 1) throw InvariantError("student_t_95: fewer than 1 degree of freedom");
  if (degrees <= 30) return kTable[static_cast<std::size_t>(degrees - 1)];
  return 1.96 + 2.4 / static_cast<double>(degrees);
}

std::vector<GridAxis> with_seed_axis(std::vector<GridAxis> axes, std::int64_t first_seed,
                                     std::int64_t seeds) {
  if (seeds < 2)
    throw UsageError("--seeds: expected at least 2 replicates, got " + std::to_string(seeds));
  if (seeds > kMaxSeeds) {
    throw InputError("--seeds", "expected at most " + std::to_string(kMaxSeeds) +
                                    " replicates, got " + std::to_string(seeds));
  }
  for (const GridAxis& axis : axes) {
    if (axis.name == kSeedAxis) {
      throw UsageError("--seeds sets the seed of every run: the grid cannot also sweep \"seed\"");
    }
  }
  GridAxis seed{kSeedAxis, {}};
  for (std::int64_t k = 0; k < seeds; ++k)
    seed.values.emplace_back(first_seed + k);
  axes.push_back(std::move(seed));
  return axes;
}

SweepResult fold_seed_replicates(const SweepResult& per_seed, std::int64_t seeds) {
  const auto n = static_cast<std::size_t>(seeds);
  if (per_seed.axes.empty() || per_seed.axes.back() != kSeedAxis || per_seed.rows.size() % n != 0) {
    throw InvariantError("fold_seed_replicates: not a sweep over a last seed axis");
  }
  SweepResult folded;
  folded.axes.assign(per_seed.axes.begin(), per_seed.axes.end() - 1);
  for (std::size_t first = 0; first < per_seed.rows.size(); first += n) {
    const SweepRow& head = per_seed.rows[first];
    SweepRow row;
    row.labels.assign(head.labels.begin(), head.labels.end() - 1);
    row.values = nlohmann::json::array();
    for (std::size_t a = 0; a + 1 < head.values.size(); ++a)
      row.values.push_back(head.values[a]);
    std::vector<const nlohmann::json*> summaries;
    bool fits = true;
    for (std::size_t k = 0; k < n; ++k) {
      summaries.push_back(&per_seed.rows[first + k].summary);
      fits = fits && !does_not_fit(per_seed.rows[first + k].summary);
    }
    row.summary = fits ? fold(summaries, true) : head.summary;
    if (fits) {
      fold_stability(row.summary, summaries);
      row.summary["seeds"] = seeds;
    }
    folded.rows.push_back(std::move(row));
  }
  return folded;
}

}  // namespace servesim
