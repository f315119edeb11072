#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/metrics_collector.h"

namespace servesim {

// When a study point counts as stable (docs/studies.md, "Stability"): it serves what it is
// offered, and its backlog does not grow over the measurement window.
struct StabilityCriteria {
  // The requests completing in the window, per second, at least (1 - served_tolerance) of
  // those arriving in it.
  double served_tolerance = 0.05;
  // The number of requests in the system (arrived, not yet finished), regressed on time over
  // the window in `trend_batches` batches of consecutive arrivals, grows no faster than
  // growth_tolerance x the offered rate, or its growth is not significant (the slope's t
  // statistic at most growth_t_limit: one-sided 1% for the 8 degrees of freedom of 10
  // batches), or the completions in the window reach 1 - growth_tolerance / 2 of the
  // arrivals (a backlog that grows shows in both; a slow fill-up of long requests only in
  // the trend).
  double growth_tolerance = 0.02;
  double growth_t_limit = 2.9;
  std::size_t trend_batches = 10;
  // Warm-up detection: MSER over the number in the system at each arrival, in batches of
  // this many arrivals (MSER-5; White, "An effective truncation heuristic for bias reduction
  // in simulation output", Simulation 69(6), 1997).
  std::size_t mser_batch = 5;
};

// The steady part of one run and whether it is stable.
struct SteadyState {
  std::int64_t arrivals = 0;  // in the whole run, rejected ones included
  // The end of the warm-up: the latest of the arrival of the first tenth of the requests,
  // MSER's truncation point and the first arrival plus the 99th percentile of E2E (a system
  // that starts empty fills up over its longest requests), at most the arrival at the middle
  // of the run. `warmup_detected` is false when MSER's truncation falls at the end of the
  // first half of the run it may search, or the E2E bound past that half (the system had not
  // settled by then).
  double warmup_end_s = 0;
  bool warmup_detected = false;
  // The window: from the end of the warm-up to the last arrival.
  double window_start_s = 0;
  double window_end_s = 0;
  std::int64_t arrivals_in_window = 0;
  std::int64_t completions_in_window = 0;
  // Per second of the window: requests (and their prompt and output tokens) arriving in it,
  // and requests (and their output tokens) completing in it.
  double offered_requests_per_s = 0;
  double offered_input_tokens_per_s = 0;
  double offered_output_tokens_per_s = 0;
  double throughput_requests_per_s = 0;
  double throughput_output_tokens_per_s = 0;
  double served_ratio = 1;  // throughput / offered (1 when nothing was offered)
  // The share of the window's arrivals that a stable system still filling up may not have
  // finished by its end: the median E2E of the run's first tenth of arrivals over the
  // window's length (at most 1). The served-share floors are lowered by it.
  double filling_share = 0;
  // Slope of the number in the system against time (requests/s), over the window's batches,
  // its t statistic, and the slope over the offered rate.
  double backlog_growth_per_s = 0;
  double backlog_growth_t = 0;
  double backlog_growth_ratio = 0;
  bool stable = true;
  std::string reason;  // why it is not stable; empty when it is
  // Not stable, yet not shown unstable either: the run ended before its warm-up did, it serves
  // at least 1 - 2 x served_tolerance of its offered rate (a shortfall that a system still
  // filling up explains) and its backlog shows no significant growth. A longer run decides it;
  // `requests_to_settle` is the fewest requests that could: twice those simulated, and enough
  // arrivals that the 99th percentile of E2E ends before the middle of the run, with a margin of a
  // quarter.
  bool undecided = false;
  std::int64_t requests_to_settle = 0;
};

// The steady state of a run from every request's timing (MetricsCollector::request_timings,
// in any order). A run with fewer than two arrival times has an empty window and is stable.
SteadyState analyze_steady_state(const std::vector<RequestTiming>& requests,
                                 const StabilityCriteria& criteria = {});

// The served share below which a point is overloaded at any run length:
// 1 - 2 x served_tolerance - filling_share.
double overloaded_below(const SteadyState& steady_state, const StabilityCriteria& criteria);

// `value` rounded to three significant digits, without an exponent ("41.6", "2500", "0.8").
std::string three_significant(double value);

// summary.json's "steady_state" of a study point.
nlohmann::json steady_state_json(const SteadyState& steady_state);

}  // namespace servesim
