#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// One latency limit: a statistic of a latency metric at most `limit_s`. Written
// "ttft_p99=0.5": metric ttft, tpot, itl or e2e; statistic mean, p50, p90, p99 or max.
struct LatencyLimit {
  std::string metric;     // "ttft"
  std::string statistic;  // "p99"
  double limit_s = 0;
  std::string text() const;  // "ttft_p99 <= 0.5 s"
  std::string summary_path() const { return metric + "_s." + statistic; }
};

// What a capacity search must meet: every latency limit, and (DistServe's goodput) at least
// `attainment` of all requests, rejected ones included, meeting both the run's TTFT and
// TPOT targets (slo.ttft_s and slo.tpot_s of the configuration). A run that rejects any
// request meets no SLO: it would reject it at every rate.
struct SloTarget {
  std::vector<LatencyLimit> limits;
  std::optional<double> attainment;
  // capacity --plan-at upper: judge each latency at its error band's pessimistic edge (see
  // judged_value) rather than as predicted.
  bool plan_at_upper = false;
  bool empty() const { return limits.empty() && !attainment; }
};

// Parses "ttft_p99=0.5" or "attainment=0.9"; `origin` names the flag in errors.
void add_slo_term(SloTarget& target, std::string_view term, const std::string& origin);

struct SloVerdict {
  bool met = true;
  std::vector<std::string> violations;  // "ttft_p99 = 0.71 s > 0.5 s"
  // The largest measured / limit ratio over the terms (attainment: target / achieved);
  // below 1 when met. Ranks points that fail by how far.
  double worst_ratio = 0;
  // The failure does not depend on the load: requests were rejected (they would be at every
  // rate and replica count) or the configuration does not fit. A search stops there.
  bool fails_at_any_load = false;
  // The run was too short to tell whether the point is stable (steady_state's undecided):
  // it does not meet the SLO, yet does not fail it either; a replica search stops there
  // rather than add replicas that would not settle it. The fewest requests that could.
  bool undecided = false;
  std::int64_t requests_to_settle = 0;
};

// Judges one study point's result: a run's summary (summary.json's content), or
// {"does_not_fit": REASON} (point_simulation.h), which meets no SLO. A point whose
// steady_state says it is not stable meets no SLO either, whatever its latencies: its queue
// grows, so a longer run would miss them (docs/studies.md, "Stability").
SloVerdict judge(const SloTarget& target, const nlohmann::json& summary);

// Reads capacity's --plan-at (Python plan_at): "prediction" or "upper" (plan_at_upper);
// anything else is an InputError naming `origin`.
void set_plan_at(SloTarget& target, const std::string& value, const std::string& origin);

// The value a latency limit is judged on: the summary's statistic (summary.json's content), or
// under plan_at_upper that statistic x (1 + the upper edge of the summary's error band of its
// metric: ttft's for ttft, tpot's for tpot and itl, e2e's for e2e); as predicted where the
// summary has no such band.
double judged_value(const SloTarget& target, const nlohmann::json& summary,
                    const LatencyLimit& limit);

// Completions a point's steady-state window needs for the statistics `target` judges: 10 /
// (1 - q) for a q-quantile (1,000 for p99, 100 for p90, 20 for p50), 1,000 for a maximum,
// 100 for a mean, 10 / (1 - F) for an attainment F (at most 1,000); the largest of them.
std::int64_t completions_needed(const SloTarget& target);

// Whether a run's summary is too close to call: a latency term within `band` (a fraction) of
// its limit, or an attainment within band / 10 of its target. A study runs such a point
// longer (point_simulation.h).
bool close_call(const SloTarget& target, const nlohmann::json& summary, double band);

// Share of all requests (completed and rejected) that met the TTFT and TPOT targets.
double attainment_of(const nlohmann::json& summary);

}  // namespace servesim
