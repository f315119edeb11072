#include "sim/metrics/log_histogram.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/metrics/latency_stats.h"
#include "tests/support/metrics_fixtures.h"

using servesim::LogHistogram;
using servesim::test::lognormal_samples;

namespace {

constexpr std::array<double, 11> kQuantiles{0.0,  0.001, 0.01, 0.1,   0.25, 0.5,
                                            0.75, 0.9,   0.99, 0.999, 1.0};

}  // namespace

TEST_CASE("LogHistogram quantiles are within the relative error of exact ones", "[metrics]") {
  const double alpha = GENERATE(0.01, 0.05);
  const auto samples = lognormal_samples(100'000, 42);
  LogHistogram histogram(alpha);
  for (double sample : samples)
    histogram.add(sample);
  auto sorted = samples;
  std::sort(sorted.begin(), sorted.end());

  for (double q : kQuantiles) {
    const double exact = servesim::percentile_of_sorted(sorted, q);
    const double estimate = histogram.quantile(q);
    INFO("alpha " << alpha << " q " << q << " exact " << exact << " estimate " << estimate);
    // The guarantee is alpha; the factor covers rounding in log() at bucket boundaries.
    CHECK(std::fabs(estimate - exact) <= alpha * exact * (1 + 1e-9));
  }
  CHECK(histogram.quantile(0) == sorted.front());
  CHECK(histogram.quantile(1) == sorted.back());
  CHECK(histogram.count() == 100'000);
  CHECK(histogram.min() == sorted.front());
  CHECK(histogram.max() == sorted.back());
  double sum = 0;
  for (double sample : samples)
    sum += sample;
  CHECK(histogram.sum() == Approx(sum).epsilon(1e-12));
  CHECK(histogram.mean() == Approx(sum / 100'000).epsilon(1e-12));
  // Memory follows the spread of values, not their number.
  CHECK(histogram.bucket_count() < static_cast<std::size_t>(20 / alpha));
}

TEST_CASE("LogHistogram merge of two halves equals one histogram of all", "[metrics]") {
  const auto samples = lognormal_samples(20'000, 7);
  LogHistogram all;
  LogHistogram first;
  LogHistogram second;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    all.add(samples[i]);
    (i < samples.size() / 2 ? first : second).add(samples[i]);
  }
  first.add(0.0, 3);  // the zero bucket merges too
  all.add(0.0, 3);
  first.merge(second);

  CHECK(first.count() == all.count());
  CHECK(first.min() == all.min());
  CHECK(first.max() == all.max());
  CHECK(first.bucket_count() == all.bucket_count());
  CHECK(first.sum() == Approx(all.sum()).epsilon(1e-12));
  for (double q : kQuantiles)
    CHECK(first.quantile(q) == all.quantile(q));

  LogHistogram empty;
  empty.merge(all);
  CHECK(empty.quantile(0.5) == all.quantile(0.5));
  CHECK(empty.min() == all.min());
}

TEST_CASE("LogHistogram add with a count equals repeated adds", "[metrics]") {
  LogHistogram batched;
  LogHistogram single;
  batched.add(0.02, 5);
  batched.add(0.3, 2);
  batched.add(1.0, 0);  // no samples: changes nothing, not even min and max
  for (int i = 0; i < 5; ++i)
    single.add(0.02);
  for (int i = 0; i < 2; ++i)
    single.add(0.3);
  CHECK(batched.count() == 7);
  CHECK(batched.max() == 0.3);
  CHECK(batched.sum() == Approx(single.sum()));
  for (double q : kQuantiles)
    CHECK(batched.quantile(q) == single.quantile(q));
}

TEST_CASE("LogHistogram counts non-positive values in a zero bucket", "[metrics]") {
  LogHistogram histogram;
  histogram.add(0.0, 6);
  histogram.add(-1.0);
  histogram.add(2.0, 3);
  CHECK(histogram.count() == 10);
  CHECK(histogram.min() == -1.0);
  CHECK(histogram.sum() == 5.0);
  CHECK(histogram.quantile(0.3) == 0.0);
  CHECK(histogram.quantile(0.5) == 0.0);
  CHECK(histogram.quantile(0.8) == Approx(2.0).epsilon(0.01));
  CHECK(histogram.bucket_count() == 2);
}

TEST_CASE("LogHistogram empty and invalid uses", "[metrics]") {
  LogHistogram histogram;
  CHECK(histogram.count() == 0);
  CHECK(histogram.mean() == 0);
  CHECK(histogram.quantile(0.99) == 0);
  CHECK(histogram.bucket_count() == 0);
  CHECK(histogram.relative_error() == 0.01);

  CHECK_THROWS_AS(LogHistogram(0.0), servesim::InputError);
  CHECK_THROWS_AS(LogHistogram(1.0), servesim::InputError);
  CHECK_THROWS_AS(LogHistogram(std::nan("")), servesim::InputError);
  CHECK_THROWS_AS(histogram.add(std::nan("")), servesim::InvariantError);
  CHECK_THROWS_AS(histogram.add(INFINITY), servesim::InvariantError);
  CHECK_THROWS_AS(histogram.add(1.0, -1), servesim::InvariantError);
  CHECK_THROWS_AS(histogram.quantile(1.5), servesim::InvariantError);
  LogHistogram coarser(0.05);
  CHECK_THROWS_AS(histogram.merge(coarser), servesim::InvariantError);
}

TEST_CASE("LogHistogram gives the same buckets whatever the order of close values", "[metrics]") {
  // Slowly growing gaps (a decode run's) mostly take the last-bucket shortcut; shuffled, they
  // mostly do not. Both must put every value in the same bucket.
  std::vector<double> values;
  for (int i = 0; i < 5000; ++i)
    values.push_back(0.02 * std::pow(1.0003, i));
  LogHistogram in_order;
  for (double v : values)
    in_order.add(v, 3);
  std::mt19937_64 rng(7);
  std::shuffle(values.begin(), values.end(), rng);
  LogHistogram shuffled;
  for (double v : values)
    shuffled.add(v, 3);
  REQUIRE(in_order.bucket_count() == shuffled.bucket_count());
  for (double q = 0; q <= 1.0; q += 0.01)
    CHECK(in_order.quantile(q) == shuffled.quantile(q));

  // A copy does not share the shortcut: adding to it leaves the original alone.
  LogHistogram copy = in_order;
  copy.add(values.front(), 1000);
  CHECK(copy.count() == in_order.count() + 1000);
  for (double q = 0; q <= 1.0; q += 0.01)
    CHECK(in_order.quantile(q) == shuffled.quantile(q));
  LogHistogram assigned;
  assigned = in_order;
  assigned.add(1e-6, 5000);
  CHECK(in_order.quantile(0.01) == shuffled.quantile(0.01));
  CHECK(assigned.quantile(0.01) < 1e-5);
}

TEST_CASE("LogHistogram buckets values at bucket edges as the logarithm says", "[metrics]") {
  // Values straddling many bucket edges, added in increasing order after a value inside each
  // bucket: the last-bucket shortcut must never claim a value of the next bucket.
  LogHistogram shortcut(0.05);
  std::vector<double> values;
  for (double v = 1e-6; v < 1e3; v *= 1.013)
    values.push_back(v);
  for (double v : values)
    shortcut.add(v);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // A fresh histogram per value computes its bucket with no shortcut at all.
    LogHistogram alone(0.05);
    alone.add(values[i]);
    LogHistogram with_shortcut(0.05);
    with_shortcut.add(values[i > 0 ? i - 1 : 0]);
    with_shortcut.add(values[i]);
    CHECK(with_shortcut.quantile(1.0) == values[i]);  // max is exact
    // The median of two is the mean of their bucket midpoints; the one of the pair alone is
    // the midpoint of values[i]'s own bucket.
    LogHistogram reference(0.05);
    reference.add(values[i > 0 ? i - 1 : 0]);
    reference.merge(alone);
    CHECK(with_shortcut.quantile(0.5) == reference.quantile(0.5));
  }
  CHECK(shortcut.count() == static_cast<std::int64_t>(values.size()));
}

TEST_CASE("LogHistogram standard deviation is exact, merged or not", "[metrics]") {
  const auto samples = lognormal_samples(50'000, 7);
  LogHistogram whole, first, second;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    whole.add(samples[i]);
    (i % 3 == 0 ? first : second).add(samples[i]);
  }
  double mean = 0;
  for (double sample : samples)
    mean += sample;
  mean /= static_cast<double>(samples.size());
  const double exact = servesim::standard_deviation(samples, mean);
  CHECK(whole.stddev() == Approx(exact).epsilon(1e-9));
  first.merge(second);
  CHECK(first.stddev() == Approx(exact).epsilon(1e-9));

  LogHistogram equal;
  equal.add(0.0123, 1'000'000);
  equal.add(0.0123, 5);
  CHECK(equal.stddev() == 0.0);  // no cancellation noise
  LogHistogram two;
  two.add(1.0, 3);
  two.add(3.0);
  CHECK(two.stddev() == Approx(std::sqrt(0.75)).epsilon(1e-15));
  CHECK(LogHistogram().stddev() == 0.0);
}
