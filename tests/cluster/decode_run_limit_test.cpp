// How long decode runs are priced for (decode_run_limit): near the length that spends the
// fewest rounds priced and launches per iteration run, for cuts every few iterations and
// rare ones alike.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/cluster/decode_runs.h"

using namespace servesim;

namespace {

// Rounds priced per iteration run, a launch counted as `launch_rounds` rounds, for runs of
// at most `limit` iterations cut at a constant rate of one per `between_cuts` iterations: each
// run costs a launch and its rounds past the cut, and runs min(cut, limit) iterations.
double cost_per_iteration(double limit, double between_cuts, double launch_rounds) {
  const double m = between_cuts;
  const double run = m * -std::expm1(-limit / m);  // expected min(cut, limit)
  return (launch_rounds + limit - run) / run;
}

}  // namespace

TEST_CASE("a decode run's limit spends near the fewest rounds and launches per iteration",
          "[cluster][bulk]") {
  for (const double m : {16.0, 256.0, 4096.0}) {
    for (const double c : {0.01, 0.1, 1.0, 10.0, 100.0, 1000.0}) {
      INFO("between cuts " << m << ", launch " << c * m << " rounds");
      const double launch = c * m;
      // The best length of 4 or more (the shortest run limit), searched on a fine grid.
      double best = std::numeric_limits<double>::infinity();
      for (double limit = 4; limit < 40 * m; limit *= 1.001)
        best = std::min(best, cost_per_iteration(limit, m, launch));
      const auto limit = static_cast<double>(decode_run_limit(m, launch));
      CHECK(cost_per_iteration(limit, m, launch) <= 1.05 * best);
    }
  }
}

TEST_CASE("a decode run's limit follows the cuts and the batch", "[cluster][bulk]") {
  // Cuts every 4 iterations (arrivals while a batch of 650 fills): a few dozen rounds, not the
  // thousand-odd a launch is worth.
  const double launch = 2 * 650 + 128;
  CHECK(decode_run_limit(4, launch) <= 32);
  CHECK(decode_run_limit(4, launch) >= 16);
  // Rarer cuts and dearer launches make runs longer; never below 4.
  std::int64_t last = 0;
  for (double m = 1; m < 1e12; m *= 3) {
    const std::int64_t limit = decode_run_limit(m, launch);
    CHECK(limit >= last);
    CHECK(limit >= decode_run_limit(m, launch / 2));
    last = limit;
  }
  CHECK(decode_run_limit(0.5, 1) == 4);
  // No cut in a long while: the decayed count of cuts reaches 0, the mean infinity.
  CHECK(decode_run_limit(1e17, launch) == kLongestDecodeRun);
  CHECK(decode_run_limit(std::numeric_limits<double>::infinity(), launch) == kLongestDecodeRun);
  CHECK(decode_run_limit(1e6, launch) < kLongestDecodeRun);
}
