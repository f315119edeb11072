#pragma once

#include <span>
#include <vector>

#include "sim/metrics/log_histogram.h"

namespace servesim {

// The summary reported for one latency distribution, in the distribution's unit (seconds).
// All zero for an empty distribution, so that summaries never contain NaN.
struct LatencyStats {
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

// The q-quantile (q in [0, 1]) of ascending `sorted` values by linear interpolation between
// closest ranks: position q (n - 1), interpolated between its neighbours. This is numpy's
// default ("linear", Hyndman and Fan type 7), so results can be checked with
// numpy.percentile. 0 for an empty span.
double percentile_of_sorted(std::span<const double> sorted, double q);

// Exact statistics of `values` (taken by value: they are sorted).
LatencyStats exact_latency_stats(std::vector<double> values);

// Statistics from a histogram: mean and max exact, percentiles within its relative error.
LatencyStats histogram_latency_stats(const LogHistogram& histogram);

}  // namespace servesim
