#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "sim/cli/capacity_layouts.h"
#include "sim/study/pareto_front.h"
#include "sim/study/point_simulation.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {
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

LayoutFront layout_front(const CapacityStudy& study, const std::vector<SearchedPoint>& evaluated,
                         double output_per_s, bool write_configs) {
  std::vector<std::size_t> meeting;
  std::vector<FrontCandidate> candidates;
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    if (!evaluated[i].verdict->met) continue;
    meeting.push_back(i);
    candidates.push_back({output_per_s / static_cast<double>(evaluated[i].gpus),
                          output_per_user(*evaluated[i].summary)});
  }
  LayoutFront front{Table({"deployment", "replicas", "GPUs", "tok/s/GPU", "tok/s/user",
                           "TTFT p99 ms", "TPOT p99 ms", "config"},
                          {0, 7}),
                    nlohmann::json::array(),
                    {}};
  for (const std::size_t c : pareto_front(candidates)) {
    const SearchedPoint& e = evaluated[meeting[c]];
    const std::string file = "front/" + std::to_string(front.json.size() + 1) + "-" +
                             slug(e.label + " " + e.counts) + ".json";
    if (write_configs) {
      const nlohmann::json config =
          study_point_config(study.base, e.overrides, study.context.data_root, e.label);
      front.config_files.emplace_back(file, config.dump(2) + "\n");
    }
    front.json.push_back({{"deployment", e.label},
                          {"replicas", e.counts},
                          {"gpus", e.gpus},
                          {"output_tokens_per_s_per_gpu", candidates[c].per_gpu},
                          {"output_tokens_per_s_per_user", candidates[c].per_user},
                          {"config", write_configs ? nlohmann::json(file) : nlohmann::json()}});
    front.table.add_row({e.label, e.counts, std::to_string(e.gpus),
                         format_fixed(candidates[c].per_gpu, 1),
                         format_fixed(candidates[c].per_user, 1),
                         format_fixed(summary_value(*e.summary, "ttft_s.p99") * 1e3, 1),
                         format_fixed(summary_value(*e.summary, "tpot_s.p99") * 1e3, 2),
                         write_configs ? file : "-"});
  }
  return front;
}

}  // namespace servesim::cli
