#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "sim/study/layout_study.h"
#include "sim/study/pareto_front.h"
#include "sim/study/point_simulation.h"
#include "sim/study/summary_columns.h"

namespace servesim {
namespace {

// A file name's part: the text's letters, digits and dots, each other run of characters one '-'.
std::string slug(const std::string& text) {
  std::string name;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.') {
      name += c;
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  return name;
}

}  // namespace

double output_per_user(const nlohmann::json& summary) {
  const double tpot = summary_value(summary, "tpot_s.mean");
  return tpot > 0 ? 1 / tpot : 0.0;
}

LayoutFront layout_front(const CapacitySearch& search, const std::vector<SearchedPoint>& evaluated,
                         double output_per_s, bool write_configs) {
  std::vector<std::size_t> meeting;
  std::vector<FrontCandidate> candidates;
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    if (!evaluated[i].verdict->met) continue;
    meeting.push_back(i);
    candidates.push_back({output_per_s / static_cast<double>(evaluated[i].gpus),
                          output_per_user(*evaluated[i].summary)});
  }
  LayoutFront front;
  for (const std::size_t c : pareto_front(candidates)) {
    const SearchedPoint& e = evaluated[meeting[c]];
    LayoutFrontPoint& point = front.points.emplace_back();
    point.point = &e;
    point.output_per_gpu = candidates[c].per_gpu;
    point.output_per_user = candidates[c].per_user;
    if (write_configs) {
      point.config_file = "front/" + std::to_string(front.points.size()) + "-" +
                          slug(e.label + " " + e.counts) + ".json";
      const nlohmann::json config =
          study_point_config(search.base, e.overrides, search.data_root, e.label);
      front.config_files.emplace_back(point.config_file, config.dump(2) + "\n");
    }
    front.json.push_back(
        {{"deployment", e.label},
         {"replicas", e.counts},
         {"gpus", e.gpus},
         {"output_tokens_per_s_per_gpu", point.output_per_gpu},
         {"output_tokens_per_s_per_user", point.output_per_user},
         {"config", write_configs ? nlohmann::json(point.config_file) : nlohmann::json()}});
  }
  return front;
}

}  // namespace servesim
