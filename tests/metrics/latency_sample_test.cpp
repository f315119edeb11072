#include "sim/metrics/latency_sample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/metrics/latency_stats.h"
#include "sim/metrics/metrics_collector.h"
#include "tests/support/metrics_fixtures.h"

using servesim::LatencySample;
using servesim::LatencyStats;

namespace {

// TTFTs under load spread wider than token gaps.
std::vector<double> latencies(std::size_t n, std::uint64_t seed) {
  return servesim::test::lognormal_samples(n, seed, 1.2);
}

}  // namespace

TEST_CASE("A latency sample is exact up to its limit", "[metrics]") {
  const std::vector<double> values = latencies(1000, 1);
  LatencySample sample(1000, 0.001);
  for (const double v : values)
    sample.add(v);
  REQUIRE(sample.exact());
  CHECK(sample.relative_error() == 0);
  CHECK(sample.count() == 1000);
  const LatencyStats exact = servesim::exact_latency_stats(values);
  const LatencyStats got = sample.stats();
  CHECK(got.mean == exact.mean);
  CHECK(got.p50 == exact.p50);
  CHECK(got.p99 == exact.p99);
  CHECK(got.stddev == exact.stddev);
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sample.quantiles({0.25, 0.999}) ==
        std::vector<double>{servesim::percentile_of_sorted(sorted, 0.25),
                            servesim::percentile_of_sorted(sorted, 0.999)});
}

TEST_CASE("Past its limit a latency sample keeps percentiles within its stated error",
          "[metrics]") {
  const double alpha = GENERATE(0.001, 0.01);
  const std::vector<double> values = latencies(50'000, 7);
  LatencySample sample(1000, alpha);
  for (const double v : values)
    sample.add(v);
  REQUIRE_FALSE(sample.exact());
  CHECK(sample.relative_error() == alpha);
  CHECK(sample.count() == 50'000);

  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<double> qs{0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999};
  const std::vector<double> got = sample.quantiles(qs);
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double exact = servesim::percentile_of_sorted(sorted, qs[i]);
    INFO("q = " << qs[i] << ": exact " << exact << ", sketched " << got[i]);
    CHECK(std::abs(got[i] - exact) <= alpha * exact);
  }
  const LatencyStats exact = servesim::exact_latency_stats(values);
  const LatencyStats stats = sample.stats();
  CHECK(stats.max == exact.max);
  CHECK(stats.mean == Approx(exact.mean).epsilon(1e-12));
  CHECK(stats.stddev == Approx(exact.stddev).epsilon(1e-9));
  CHECK(std::abs(stats.p99 - exact.p99) <= alpha * exact.p99);
}

TEST_CASE("A latency sample refuses a negative limit and an error outside (0, 1)", "[metrics]") {
  CHECK_THROWS_AS(LatencySample(-1, 0.001), servesim::InputError);
  CHECK_THROWS_AS(LatencySample(10, 0.0), servesim::InputError);
  CHECK_THROWS_AS(LatencySample(10, 1.0), servesim::InputError);
}

TEST_CASE("The summary states the latency error once past the exact limit", "[metrics]") {
  using servesim::test::finished_request;
  const std::vector<double> ttfts = latencies(400, 3);
  const auto feed = [&](servesim::MetricsCollector& collector) {
    for (std::size_t i = 0; i < ttfts.size(); ++i) {
      const double arrival = static_cast<double>(i);
      collector.on_request_finished(finished_request(static_cast<std::int64_t>(i), arrival,
                                                     arrival + ttfts[i], arrival + ttfts[i] + 1.0,
                                                     10, 11));
    }
  };
  servesim::MetricsCollector exact;  // the default limit is far above 400
  feed(exact);
  servesim::MetricsOptions limited;
  limited.exact_latency_limit = 100;
  limited.latency_relative_error = 0.001;
  servesim::MetricsCollector sketched(limited);
  feed(sketched);
  const auto e = exact.summarize(500), s = sketched.summarize(500);
  CHECK(e.latency_relative_error == 0);
  CHECK(s.latency_relative_error == 0.001);
  CHECK(s.requests_completed == 400);
  CHECK(s.ttft_s.max == e.ttft_s.max);
  CHECK(s.ttft_s.mean == Approx(e.ttft_s.mean).epsilon(1e-12));
  for (const auto& [got, want] :
       {std::pair{s.ttft_s.p50, e.ttft_s.p50}, std::pair{s.ttft_s.p99, e.ttft_s.p99},
        std::pair{s.e2e_s.p90, e.e2e_s.p90}, std::pair{s.tpot_s.p99, e.tpot_s.p99}}) {
    CHECK(std::abs(got - want) <= 0.001 * want);
  }
  CHECK(sketched.latency_quantiles(servesim::MetricsCollector::Latency::Ttft, {0.99}).front() ==
        s.ttft_s.p99);
}
