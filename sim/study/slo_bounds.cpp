#include "sim/study/slo_bounds.h"

#include <cctype>

#include "sim/study/point_simulation.h"
#include "sim/study/steady_state.h"
#include "sim/study/summary_columns.h"

namespace servesim {
namespace {

// Seconds between two isolated arrivals: longer than any request takes alone on a shipped
// profile (checked after the run: the E2E maximum must stay below it).
constexpr double kIsolationGapS = 1e5;

std::string milliseconds(double seconds) {
  return three_significant(seconds * 1e3) + " ms";
}

std::string upper(const std::string& text) {
  std::string result = text;
  for (char& c : result)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return result;
}

}  // namespace

nlohmann::json isolated_summary(nlohmann::json config, std::int64_t requests,
                                const std::filesystem::path& data_root,
                                const std::filesystem::path& working_dir,
                                const std::string& point_name) {
  auto& workload = config["workload"];
  workload["arrival"] = {{"process", "constant"}, {"rate_per_s", 1 / kIsolationGapS}};
  workload["num_requests"] = requests;
  workload.erase("duration_s");
  config["replicas"] = 1;
  return simulate_summary(std::move(config), data_root, working_dir, point_name);
}

std::optional<std::string> unreachable(const SloTarget& target, const nlohmann::json& isolated) {
  if (!isolated.is_object() || isolated.contains("does_not_fit") || !isolated.contains("e2e_s") ||
      summary_value(isolated, "e2e_s.max") >= kIsolationGapS) {
    return std::nullopt;
  }
  std::string reasons;
  const auto add = [&](const std::string& reason) {
    reasons += (reasons.empty() ? "unreachable: " : "; ") + reason;
  };
  for (const auto& limit : target.limits) {
    const double alone = summary_value(isolated, limit.summary_path());
    if (!(alone > limit.limit_s)) continue;
    const std::string how = limit.metric == "tpot" || limit.metric == "itl" ? " at batch 1"
                            : limit.metric == "ttft" && limit.statistic == "max"
                                ? " (the longest prompt's prefill alone)"
                                : " of a request alone";
    add(upper(limit.metric) + " " + limit.statistic + how + " is " + milliseconds(alone) + " > " +
        milliseconds(limit.limit_s));
  }
  if (target.attainment && isolated.contains("slo_attainment")) {
    const double alone = attainment_of(isolated);
    if (alone < *target.attainment) {
      add("attainment of requests alone is " + three_significant(alone) + " < " +
          three_significant(*target.attainment));
    }
  }
  if (reasons.empty()) return std::nullopt;
  return reasons;
}

}  // namespace servesim
