#include "sim/metrics/metrics_collector.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/metrics/summary_json.h"
#include "tests/support/metrics_fixtures.h"

using servesim::MetricsCollector;
using servesim::MetricsOptions;
using servesim::test::feed_scripted_run;
using servesim::test::finished_request;
using servesim::test::iteration;

namespace {
constexpr double kTight = 1e-12;
}

TEST_CASE("Summary of a scripted run matches hand-computed values", "[metrics]") {
  MetricsCollector collector;
  feed_scripted_run(collector);
  const auto s = collector.summarize(10.0);

  CHECK(s.requests_completed == 4);
  CHECK(s.requests_rejected == 1);
  CHECK(s.duration_s == 10.0);
  CHECK(s.throughput_requests_per_s == Approx(0.4).epsilon(kTight));
  CHECK(s.throughput_output_tokens_per_s == Approx(1.9).epsilon(kTight));  // 19 tokens
  CHECK(s.throughput_total_tokens_per_s == Approx(21.9).epsilon(kTight));  // 200 + 19
  CHECK(s.preemptions == 3);

  // TTFT {0.25, 0.5, 1, 2}: p50 at rank 1.5, p90 at 2.7, p99 at 2.97.
  CHECK(s.ttft_s.mean == Approx(0.9375).epsilon(kTight));
  CHECK(s.ttft_s.p50 == Approx(0.75).epsilon(kTight));
  CHECK(s.ttft_s.p90 == Approx(1.7).epsilon(kTight));
  CHECK(s.ttft_s.p99 == Approx(1.97).epsilon(kTight));
  CHECK(s.ttft_s.max == 2.0);

  // TPOT {0.25, 0.5, 1}: request 3 has one output token and no TPOT.
  CHECK(s.tpot_s.mean == Approx(1.75 / 3).epsilon(kTight));
  CHECK(s.tpot_s.p50 == Approx(0.5).epsilon(kTight));
  CHECK(s.tpot_s.p90 == Approx(0.9).epsilon(kTight));
  CHECK(s.tpot_s.p99 == Approx(0.99).epsilon(kTight));
  CHECK(s.tpot_s.max == 1.0);

  // E2E {2, 2.5, 3, 3.25}.
  CHECK(s.e2e_s.mean == Approx(2.6875).epsilon(kTight));
  CHECK(s.e2e_s.p50 == Approx(2.75).epsilon(kTight));
  CHECK(s.e2e_s.p90 == Approx(3.175).epsilon(kTight));
  CHECK(s.e2e_s.p99 == Approx(3.2425).epsilon(kTight));
  CHECK(s.e2e_s.max == 3.25);

  // E2E / output tokens: 3/5, 2.5/9, 2/1, 3.25/4.
  CHECK(s.normalized_latency_s_per_token ==
        Approx((0.6 + 2.5 / 9 + 2.0 + 0.8125) / 4).epsilon(kTight));

  // ITL: four gaps of 0.5 s and eight of 0.25 s.
  CHECK(s.itl_relative_error == 0.01);
  CHECK(s.itl_s.mean == Approx(4.0 / 12).epsilon(kTight));
  CHECK(s.itl_s.max == 0.5);
  CHECK(s.itl_s.p50 == Approx(0.25).epsilon(0.01));
  CHECK(s.itl_s.p90 == Approx(0.5).epsilon(0.01));

  CHECK(s.mean_batch_size == 3.0);
  CHECK_FALSE(s.slo_attainment.has_value());
}

TEST_CASE("TPOT leaves out requests with a single output token", "[metrics]") {
  MetricsCollector collector;
  collector.on_request_finished(finished_request(1, 0, 0.2, 0.2, 10, 1));
  SECTION("only single-token requests: TPOT is empty, not NaN") {
    const auto s = collector.summarize(1.0);
    CHECK(s.tpot_s.mean == 0);
    CHECK(s.tpot_s.max == 0);
    CHECK(s.ttft_s.mean == Approx(0.2));
  }
  SECTION("mixed: TPOT is the other request's alone") {
    collector.on_request_finished(finished_request(2, 0, 1.0, 2.0, 10, 11));  // 1 s / 10
    const auto s = collector.summarize(1.0);
    CHECK(s.tpot_s.mean == Approx(0.1).epsilon(kTight));
    CHECK(s.tpot_s.p50 == Approx(0.1).epsilon(kTight));
    CHECK(s.ttft_s.mean == Approx(0.6).epsilon(kTight));  // both count for TTFT
  }
}

TEST_CASE("KV utilization is weighted by iteration duration", "[metrics]") {
  MetricsCollector collector;
  collector.on_iteration(iteration(0, 0.0, 1.0, 4, 50, 100));   // 50% for 1 s
  collector.on_iteration(iteration(1, 0.0, 3.0, 2, 10, 100));   // 10% for 3 s
  collector.on_iteration(iteration(0, 1.0, 0.0, 6, 100, 100));  // 100% for no time
  const auto s = collector.summarize(4.0);
  // (0.5 * 1 + 0.1 * 3) / 4; the plain mean over iterations would be 0.533.
  CHECK(s.kv_utilization == Approx(0.2).epsilon(kTight));
  CHECK(s.mean_batch_size == Approx(4.0).epsilon(kTight));
  CHECK(collector.iteration_records().size() == 3);
}

TEST_CASE("the KV memory breakdown is time-weighted and sums to one", "[metrics]") {
  MetricsCollector collector;
  auto first = iteration(0, 0.0, 1.0, 4, 60, 100);
  first.kv_memory = {40, 10, 10, 30, 10};
  auto second = iteration(0, 1.0, 3.0, 2, 20, 100);
  second.kv_memory = {20, 0, 0, 0, 80};
  collector.on_iteration(first);
  collector.on_iteration(second);
  const auto m = collector.summarize(4.0).kv_memory;
  CHECK(m.token_states == Approx((0.4 * 1 + 0.2 * 3) / 4).epsilon(kTight));
  CHECK(m.reserved == Approx(0.1 / 4).epsilon(kTight));
  CHECK(m.internal_fragmentation == Approx(0.1 / 4).epsilon(kTight));
  CHECK(m.external_fragmentation == Approx(0.3 / 4).epsilon(kTight));
  CHECK(m.free == Approx((0.1 + 0.8 * 3) / 4).epsilon(kTight));
  CHECK(m.token_states + m.reserved + m.internal_fragmentation + m.external_fragmentation +
            m.free ==
        Approx(1.0).epsilon(kTight));
}

TEST_CASE("SLO attainment counts requests meeting every target that is set", "[metrics]") {
  MetricsOptions options;
  // Scripted run: (ttft, tpot) = (1, 0.5), (0.5, 0.25), (2, none), (0.25, 1).
  double expected = 0;
  SECTION("both targets: requests 1 and 2 pass (bounds inclusive)") {
    options.slo_ttft_s = 1.0;
    options.slo_tpot_s = 0.5;
    expected = 0.5;
  }
  SECTION("TTFT only: request 3 misses") {
    options.slo_ttft_s = 1.0;
    expected = 0.75;
  }
  SECTION("TPOT only: single-token request 3 passes, request 4 misses") {
    options.slo_tpot_s = 0.5;
    expected = 0.75;
  }
  MetricsCollector collector(options);
  feed_scripted_run(collector);
  const auto s = collector.summarize(10.0);
  REQUIRE(s.slo_attainment.has_value());
  CHECK(*s.slo_attainment == expected);
}

TEST_CASE("an E2E target counts too, and goodput is the requests meeting every target per s",
          "[metrics]") {
  MetricsOptions options;
  options.slo_ttft_s = 1.0;  // requests 1, 2, 4 pass
  options.slo_e2e_s = 3.0;   // e2e 3.0, 2.5, 3.25: request 4 misses
  MetricsCollector collector(options);
  feed_scripted_run(collector);
  const auto s = collector.summarize(10.0);
  CHECK(*s.slo_attainment == 0.5);
  CHECK(*s.goodput_requests_per_s == 0.2);
  CHECK_FALSE(MetricsCollector().summarize(10.0).goodput_requests_per_s);
}

TEST_CASE("p95, standard deviations and token totals of a scripted run", "[metrics]") {
  MetricsCollector collector;
  feed_scripted_run(collector);
  const auto s = collector.summarize(10.0);
  CHECK(s.prompt_tokens == 200);
  CHECK(s.output_tokens == 19);
  // TTFT {0.25, 0.5, 1, 2}: mean 0.9375; p95 at position 2.85 between 1 and 2.
  CHECK(s.ttft_s.p95 == Approx(1.85).epsilon(kTight));
  const double ttft_variance = (std::pow(0.25 - 0.9375, 2) + std::pow(0.5 - 0.9375, 2) +
                                std::pow(1 - 0.9375, 2) + std::pow(2 - 0.9375, 2)) /
                               4;
  CHECK(s.ttft_s.stddev == Approx(std::sqrt(ttft_variance)).epsilon(kTight));
  // The same q gives the same figure as the summary, to the bit.
  using Latency = MetricsCollector::Latency;
  const auto q = collector.latency_quantiles(Latency::Ttft, {0.5, 0.9, 0.95, 0.99});
  CHECK(q == std::vector<double>{s.ttft_s.p50, s.ttft_s.p90, s.ttft_s.p95, s.ttft_s.p99});
  CHECK(collector.latency_quantiles(Latency::E2e, {0.99}).front() == s.e2e_s.p99);
  CHECK(collector.latency_quantiles(Latency::Itl, {0.95}).front() == s.itl_s.p95);
}

TEST_CASE("An empty run summarizes to zeros", "[metrics]") {
  MetricsOptions options;
  options.slo_ttft_s = 1.0;
  const auto s = MetricsCollector(options).summarize(0.0);
  CHECK(s.requests_completed == 0);
  CHECK(s.throughput_requests_per_s == 0);
  CHECK(s.ttft_s.p99 == 0);
  CHECK(s.itl_s.mean == 0);
  CHECK(s.kv_utilization == 0);
  CHECK(s.mean_batch_size == 0);
  CHECK(s.slo_attainment == 0.0);
}

TEST_CASE("Turning records off changes no summary value", "[metrics]") {
  MetricsOptions lean;
  lean.keep_request_records = false;
  lean.keep_iteration_records = false;
  MetricsCollector kept;
  MetricsCollector dropped(lean);
  feed_scripted_run(kept);
  feed_scripted_run(dropped);
  CHECK(dropped.request_records().empty());
  CHECK(dropped.iteration_records().empty());
  CHECK(kept.request_records().size() == 5);
  const auto a = kept.summarize(10.0);
  const auto b = dropped.summarize(10.0);
  CHECK(a.e2e_s.p90 == b.e2e_s.p90);
  CHECK(a.kv_utilization == b.kv_utilization);
  CHECK(a.requests_rejected == b.requests_rejected);
}

TEST_CASE("Impossible records are invariant errors", "[metrics]") {
  using servesim::InvariantError;
  MetricsCollector collector;
  auto no_output = finished_request(1, 0, 1, 2, 10, 0);
  CHECK_THROWS_AS(collector.on_request_finished(no_output), InvariantError);
  auto backwards = finished_request(2, 5, 1, 2, 10, 3);
  CHECK_THROWS_AS(collector.on_request_finished(backwards), InvariantError);
  auto not_a_number = finished_request(3, 0, 1, std::nan(""), 10, 3);
  CHECK_THROWS_AS(collector.on_request_finished(not_a_number), InvariantError);
  auto marked_rejected = finished_request(4, 0, 1, 2, 10, 3);
  marked_rejected.rejected = true;
  CHECK_THROWS_AS(collector.on_request_finished(marked_rejected), InvariantError);
  CHECK_THROWS_AS(collector.on_request_rejected(finished_request(5, 0, 1, 2, 10, 3)),
                  InvariantError);
  CHECK_THROWS_AS(collector.on_token_gaps(-0.1, 1), InvariantError);
  CHECK_THROWS_AS(collector.on_iteration(iteration(0, 0, -1, 1, 0, 0)), InvariantError);
  CHECK_THROWS_AS(collector.summarize(-1), InvariantError);
  CHECK(collector.summarize(1).requests_completed == 0);  // nothing bad was counted

  MetricsOptions bad;
  bad.slo_tpot_s = -0.1;
  CHECK_THROWS_AS(MetricsCollector(bad), servesim::InputError);
}

TEST_CASE("a run of iterations and gaps in one call sums as one call each would, to the bit",
          "[metrics]") {
  // Durations and KV memory that make every rounding count: a different order of additions
  // would change the last bits of the sums.
  const std::size_t count = 997;
  std::vector<servesim::IterationRecord> records;
  double start_s = 0.1;
  for (std::size_t k = 1; k <= count; ++k) {
    auto it = iteration(1, start_s, 0.013 + 1e-4 * std::sin(static_cast<double>(k)), 7, 0, 1021);
    it.kv_memory = {static_cast<std::int64_t>(300 + 3 * k % 500), static_cast<std::int64_t>(k % 11),
                    static_cast<std::int64_t>(k % 13), 0, 0};
    it.kv_memory.free = it.kv_capacity_tokens - it.kv_memory.token_states - it.kv_memory.reserved -
                        it.kv_memory.internal_fragmentation;
    it.kv_used_tokens = it.kv_capacity_tokens - it.kv_memory.free;
    records.push_back(it);
    start_s += it.duration_s;
  }
  const auto set = [&records](std::size_t k, servesim::IterationRecord& record) {
    record = records[k - 1];
  };
  const auto gap = [&records](std::size_t k) { return records[k - 1].duration_s; };
  for (const bool keep : {false, true}) {
    MetricsOptions options;
    options.keep_iteration_records = keep;
    MetricsCollector one_by_one(options);
    MetricsCollector at_once(options);
    one_by_one.on_iteration(iteration(1, 0, 0.1, 3, 5, 1021));  // sums that do not start at 0
    at_once.on_iteration(iteration(1, 0, 0.1, 3, 5, 1021));
    for (const auto& record : records) {
      one_by_one.on_iteration(record);
      one_by_one.on_token_gaps(1, record.duration_s, record.batch_size);
    }
    at_once.on_iterations(records.front(), count, set);
    at_once.on_token_gaps(
        1, count, [](std::size_t) { return std::int64_t{7}; }, gap);
    INFO("iteration records kept: " << keep);
    CHECK(servesim::summary_to_json(at_once.summarize(20)).dump() ==
          servesim::summary_to_json(one_by_one.summarize(20)).dump());
    CHECK(at_once.iteration_records().size() == one_by_one.iteration_records().size());
    CHECK(at_once.itl_histogram().sum() == one_by_one.itl_histogram().sum());
    CHECK(at_once.itl_histogram().count() == static_cast<std::int64_t>(7 * count));
  }
  MetricsCollector collector;
  CHECK_THROWS_AS(collector.on_token_gaps(
                      0, 2, [](std::size_t) { return std::int64_t{1}; },
                      [](std::size_t k) { return k == 2 ? -1.0 : 1.0; }),
                  servesim::InvariantError);
}

TEST_CASE("steady-state throughputs leave out the warm-up and the drain", "[metrics]") {
  // Twenty arrivals one second apart (0 .. 19 s), each with 10 output tokens, each done
  // 5 s after it arrives; request 7 is rejected. The warm-up ends at the arrival of the
  // third (a tenth of twenty: t = 2 s), the window at the last arrival (19 s).
  MetricsCollector collector;
  for (int i = 0; i < 20; ++i) {
    const double t = i;
    if (i == 7) {
      collector.on_request_rejected(servesim::test::rejected_request(i, t, "too long"));
    } else {
      collector.on_request_finished(finished_request(i, t, t + 1, t + 5, 100, 10));
    }
  }
  const servesim::SteadyStateThroughput s = collector.steady_state();
  CHECK(s.window_start_s == 2);
  CHECK(s.window_end_s == 19);
  // Arrivals in (2, 19]: 3 .. 19, seventeen requests, sixteen served plus one rejected
  // (whose requested 16 output tokens are offered too).
  CHECK(s.offered_requests_per_s == Approx(17.0 / 17));
  CHECK(s.offered_output_tokens_per_s == Approx((16 * 10 + 16) / 17.0));
  // Completions in (2, 19]: arrivals 0 .. 14 (done at 5 .. 19) less the rejected one.
  CHECK(s.throughput_requests_per_s == Approx(14.0 / 17));
  CHECK(s.throughput_output_tokens_per_s == Approx(140.0 / 17));
  // The whole run's throughput divides by a span that includes the 5 s drain.
  CHECK(collector.summarize(24).throughput_requests_per_s == Approx(19.0 / 24));
  CHECK(MetricsCollector().steady_state().window_end_s == 0);  // nothing arrived
}

TEST_CASE("rejections are counted per reason, without each request's own figure", "[metrics]") {
  MetricsCollector collector;
  const auto reject = [&](std::int64_t id, const std::string& reason) {
    collector.on_request_rejected(servesim::test::rejected_request(id, 0, reason));
  };
  reject(1, "prompt + output tokens (5000) exceed the maximum sequence length (4096)");
  reject(2, "prompt + output tokens (9000) exceed max_num_batched_tokens (8192)");
  reject(3, "prompt + output tokens (4500) exceed the maximum sequence length (4096)");
  reject(4, "no figure here");
  reject(5,
         "prompt tokens (5000) leave no room for an output token within the maximum sequence "
         "length (4096)");
  using Counts = std::vector<std::pair<std::string, std::int64_t>>;
  CHECK(collector.rejections_by_reason() ==
        Counts{{"prompt + output tokens exceed the maximum sequence length (4096)", 2},
               {"prompt + output tokens exceed max_num_batched_tokens (8192)", 1},
               {"no figure here", 1},
               {"prompt tokens leave no room for an output token within the maximum sequence "
                "length (4096)",
                1}});
}

TEST_CASE("outputs cut at max_len are counted, with the tokens not generated", "[metrics]") {
  MetricsCollector collector;
  auto cut = finished_request(1, 0, 1, 2, 900, 124);
  cut.cut_output_tokens = 76;
  CHECK(cut.requested_output_tokens() == 200);
  collector.on_request_finished(cut);
  auto also_cut = finished_request(2, 0, 1, 2, 1000, 24);
  also_cut.cut_output_tokens = 6;
  collector.on_request_finished(also_cut);
  collector.on_request_finished(finished_request(3, 0, 1, 2, 100, 50));
  collector.on_request_rejected(servesim::test::rejected_request(4, 0, "too long (5000)"));
  const auto s = collector.summarize(2);
  CHECK(s.requests_completed == 3);
  CHECK(s.requests_output_cut == 2);
  CHECK(s.cut_output_tokens == 82);
  CHECK(s.output_tokens == 124 + 24 + 50);  // the tokens generated
  // A rejected request was never served, so nothing of it was cut; a negative cut is a bug.
  auto rejected_cut = servesim::test::rejected_request(5, 0, "too long (5000)");
  rejected_cut.cut_output_tokens = 3;
  CHECK_THROWS_AS(collector.on_request_rejected(rejected_cut), servesim::InvariantError);
  auto negative = finished_request(6, 0, 1, 2, 10, 3);
  negative.cut_output_tokens = -1;
  CHECK_THROWS_AS(collector.on_request_finished(negative), servesim::InvariantError);
}
