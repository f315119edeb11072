#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/study/slo.h"

namespace servesim {

// The arrival rate of a rate-driven workload (poisson, gamma or constant arrivals), which a
// rate search starts from; otherwise a UsageError whose hints name how to fix it in the
// caller's terms (`arrival_hint`: e.g. "use --arrival poisson"; `start_rate_hint`: the option
// that gives the start rate).
double configured_rate(const nlohmann::json& config, std::string_view arrival_hint,
                       std::string_view start_rate_hint);

struct RateSearchOptions {
  double start_rate_per_s = 1;
  // Stop when the lowest failing rate is within this fraction above the highest passing one.
  double relative_precision = 0.02;
  // Rates tried per round; fixed (not the thread count) so results never depend on -j.
  std::size_t points_per_round = 3;
  double min_rate_per_s = 1e-4;
  double max_rate_per_s = 1e6;
  std::size_t max_points = 200;
};

// Refuses options that leave nothing to search, naming the flag (--max-points 0, --min-rate
// above --max-rate, a rate that is not a positive number). search_highest_rate checks them
// too; a caller checks them early, before anything is simulated.
void check_rate_search_options(const RateSearchOptions& options);

struct RatePoint {
  double rate_per_s = 0;
  nlohmann::json summary;
  SloVerdict verdict;
};

struct RateSearchResult {
  enum class Outcome {
    Found,      // passing_rate_per_s meets the SLO, failing_rate_per_s does not
    NeverMet,   // even the lowest rate tried fails
    AlwaysMet,  // even the highest rate tried passes
    Unresolved  // max_points ran out before the precision was reached
  };
  Outcome outcome = Outcome::Found;
  double passing_rate_per_s = 0;  // highest rate that met the SLO (0 when none)
  double failing_rate_per_s = 0;  // lowest rate above it that did not (0 when none)
  std::vector<RatePoint> points;  // in the order evaluated
  const RatePoint* best() const;  // the answer, or for NeverMet the point closest to passing
  // The lowest rate above the answer whose run was too short to judge it (SloVerdict's
  // undecided), or null. The search takes it as a failure, so the answer is a lower bound:
  // a longer run may pass rates up to the next decided failure.
  const RatePoint* undecided() const;
};

// The outcome as summary.json of `servesim capacity` names it: found, never_met,
// met_at_every_rate, unresolved.
std::string_view outcome_name(RateSearchResult::Outcome outcome) noexcept;

// Runs the rates of one round (in any order, possibly in parallel) and returns one run
// summary per rate, in the same order.
using RateEvaluator = std::function<std::vector<nlohmann::json>(const std::vector<double>& rates)>;

// Highest arrival rate meeting `target`, assuming latency grows with load: first brackets
// the boundary by doubling up (or halving down) from the start rate, then narrows the
// bracket with evenly spaced rates until it is within the precision. The answer is always a
// rate that was simulated and passed.
RateSearchResult search_highest_rate(const SloTarget& target, const RateSearchOptions& options,
                                     const RateEvaluator& evaluate);

// UsageError when the options cannot start a search (a start rate that is not a positive
// number, a precision that is not a positive fraction, no rates per round): what
// search_highest_rate refuses, for a command to refuse before it simulates anything.
void check_rate_search_options(const RateSearchOptions& options);

}  // namespace servesim
