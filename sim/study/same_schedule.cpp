#include "sim/study/same_schedule.h"

#include <map>

#include "sim/study/point_simulation.h"
#include "sim/study/summary_columns.h"

namespace servesim {
namespace {

// The figures a schedule decides, in summary order.
std::vector<double> schedule_figures(const nlohmann::json& summary) {
  std::vector<double> figures;
  for (const auto& [name, value] : summary_columns(summary)) {
    const bool latency = name.starts_with("ttft_s.") || name.starts_with("tpot_s.") ||
                         name.starts_with("itl_s.") || name.starts_with("e2e_s.");
    if (latency || name == "duration_s" || name == "requests_completed" ||
        name == "requests_rejected" || name == "preemptions") {
      figures.push_back(value);
    }
  }
  return figures;
}

}  // namespace

std::vector<std::vector<std::size_t>> same_schedule_groups(
    const std::vector<const nlohmann::json*>& summaries) {
  std::map<std::vector<double>, std::vector<std::size_t>> by_figures;
  std::vector<std::vector<double>> order;
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    if (does_not_fit(*summaries[i])) continue;
    auto figures = schedule_figures(*summaries[i]);
    if (figures.empty()) continue;
    auto& group = by_figures[figures];
    if (group.empty()) order.push_back(std::move(figures));
    group.push_back(i);
  }
  std::vector<std::vector<std::size_t>> groups;
  for (const auto& figures : order) {
    if (by_figures[figures].size() > 1) groups.push_back(by_figures[figures]);
  }
  return groups;
}

std::string same_schedule_note(const std::vector<std::vector<std::size_t>>& groups,
                               const std::vector<std::string>& names) {
  if (groups.empty()) return "";
  std::string note = "Same schedule: ";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) note += "; ";
    const auto& group = groups[g];
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (k > 0) note += k + 1 == group.size() ? " and " : ", ";
      note += names[group[k]];
    }
  }
  return note +
         " (identical latencies, throughput and preemptions: they differ at most in "
         "memory)\n";
}

}  // namespace servesim
