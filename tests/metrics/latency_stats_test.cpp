#include "sim/metrics/latency_stats.h"

#include <vector>

#include <catch2/catch.hpp>

#include "sim/core/error.h"

using servesim::percentile_of_sorted;

TEST_CASE("Percentiles interpolate linearly between closest ranks, as numpy", "[metrics]") {
  // Expected values from numpy.percentile(x, 100 * q).
  const std::vector<double> four{1, 2, 3, 4};
  CHECK(percentile_of_sorted(four, 0.5) == 2.5);
  CHECK(percentile_of_sorted(four, 0.0) == 1.0);
  CHECK(percentile_of_sorted(four, 1.0) == 4.0);
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(percentile_of_sorted(ten, 0.9) == Approx(9.1).epsilon(1e-12));
  CHECK(percentile_of_sorted(ten, 0.99) == Approx(9.91).epsilon(1e-12));
  const std::vector<double> one{0.125};
  CHECK(percentile_of_sorted(one, 0.99) == 0.125);
  CHECK(percentile_of_sorted({}, 0.5) == 0.0);
  CHECK_THROWS_AS(percentile_of_sorted(four, -0.1), servesim::InvariantError);
}

TEST_CASE("Exact latency stats sort their input", "[metrics]") {
  const auto stats = servesim::exact_latency_stats({4.0, 1.0, 3.0, 2.0});
  CHECK(stats.mean == 2.5);
  CHECK(stats.p50 == 2.5);
  CHECK(stats.max == 4.0);
  const auto empty = servesim::exact_latency_stats({});
  CHECK(empty.mean == 0);
  CHECK(empty.max == 0);
}
