#pragma once

#include <span>
#include <vector>

#include "sim/metrics/log_histogram.h"

namespace servesim {

// The summary reported for one latency distribution, in the distribution's unit (seconds).
// All zero for an empty distribution, so that summaries never contain NaN.
// summary.json holds mean, p50, p90, p99 and max; p95 and stddev are for vLLM's result keys
// (--save-result) and the console.
struct LatencyStats {
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
  double p95 = 0;
  double stddev = 0;  // population standard deviation (numpy.std's default), exact
};

// The q-quantile (q in [0, 1]) of ascending `sorted` values by linear interpolation between
// closest ranks: position q (n - 1), interpolated between its neighbours. This is numpy's
// default ("linear", Hyndman and Fan type 7), so results can be checked with
// numpy.percentile. 0 for an empty span.
double percentile_of_sorted(std::span<const double> sorted, double q);

// Exact statistics of `values` (taken by value: they are sorted).
LatencyStats exact_latency_stats(std::vector<double> values);

// Statistics from a histogram: mean, max and stddev exact, percentiles within its relative
// error.
LatencyStats histogram_latency_stats(const LogHistogram& histogram);

// The population standard deviation of `values` about their `mean`, summed in the given order.
double standard_deviation(std::span<const double> values, double mean);

}  // namespace servesim
