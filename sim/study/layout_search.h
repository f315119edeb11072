#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/study/slo.h"

namespace servesim {

// The replicas of each role of a disaggregated deployment (xPyD: x prefill, y decode).
struct RoleCounts {
  std::int64_t prefill = 0;
  std::int64_t decode = 0;
  bool operator==(const RoleCounts&) const = default;
};

// Rate matching: the fewest replicas of each role whose best throughput (role_throughput.h)
// covers `rate_per_s` requests/s of the mean prompt and output, at least one each. With upper
// bounds of the throughputs these are lower bounds of the counts a simulation needs.
RoleCounts rate_matched_counts(double rate_per_s, double prompt_tokens, double output_tokens,
                               double prefill_tokens_per_s, double decode_tokens_per_s);

struct LayoutPoint {
  RoleCounts counts;
  nlohmann::json summary;
  SloVerdict verdict;
};

struct LayoutSearchResult {
  std::optional<RoleCounts> answer;  // the fewest of each role that meet the SLO
  std::vector<LayoutPoint> points;   // in the order evaluated
  const LayoutPoint* answer_point() const;
};

// Runs one round of (layout, counts) points, possibly in parallel, and returns one run
// summary per point in the same order.
struct LayoutTrial {
  std::size_t layout = 0;
  RoleCounts counts;
};
using LayoutEvaluator =
    std::function<std::vector<nlohmann::json>(const std::vector<LayoutTrial>& trials)>;

// The fewest replicas of each role of every layout (a pair of role shapes) that meet
// `target`, assuming more replicas of either role never hurt. From each layout's `start`
// (its rate-matched counts): first a passing point, the start doubled in both roles until it
// passes (up to `max_replicas` each); then the fewest prefill replicas with that many decode
// replicas, by bisection; then the fewest decode replicas with those prefill replicas. A
// layout stops at a failure that does not depend on the load (it does not fit, it rejects
// requests). The layouts are searched side by side, one point per layout per round, so the
// rounds (and the answers) do not depend on how the points are run.
std::vector<LayoutSearchResult> search_fewest_layouts(const SloTarget& target,
                                                      const std::vector<RoleCounts>& starts,
                                                      std::int64_t max_replicas,
                                                      const LayoutEvaluator& evaluate);

}  // namespace servesim
