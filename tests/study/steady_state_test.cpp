#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/study/serving_prices.h"
#include "sim/study/slo.h"
#include "sim/study/slo_bounds.h"
#include "sim/study/steady_state.h"

namespace {

using servesim::RequestTiming;

// One arrival a second for `n` seconds, served one after another (first come, first served)
// in `service_s` each: the server keeps up when service_s <= 1.
std::vector<RequestTiming> single_server(int n, double service_s) {
  std::vector<RequestTiming> requests;
  double free_at = 0;
  for (int i = 0; i < n; ++i) {
    const double arrival = i;
    const double start = std::max(arrival, free_at);
    free_at = start + service_s;
    requests.push_back({arrival, start, free_at, 100, 10});
  }
  return requests;
}

}  // namespace

TEST_CASE("A server that keeps up is stable, its warm-up found and its rates exact",
          "[study][steady_state]") {
  // Every request takes 5 s and they overlap (an infinite server): arrival i finds
  // min(i, 4) requests in the system (those arriving at i-4 .. i-1), so the first batch of
  // five arrivals is the ramp-up and MSER cuts it.
  std::vector<RequestTiming> requests;
  for (int i = 0; i < 1000; ++i)
    requests.push_back({double(i), double(i), i + 5.0, 100, 10});
  const auto s = servesim::analyze_steady_state(requests);
  CHECK(s.warmup_detected);
  // MSER cuts at arrival 5, the first tenth at arrival 100: the later wins.
  CHECK(s.window_start_s == 100);
  CHECK(s.window_end_s == 999);
  CHECK(s.arrivals_in_window == 899);  // 101 .. 999
  // Completions in (100, 999]: requests 96 .. 994.
  CHECK(s.completions_in_window == 899);
  CHECK(s.offered_requests_per_s == Approx(899.0 / 899));
  CHECK(s.offered_input_tokens_per_s == Approx(100));
  CHECK(s.served_ratio == 1);
  CHECK(s.backlog_growth_per_s == 0);
  CHECK(s.stable);
  CHECK(s.reason.empty());
  const auto json = servesim::steady_state_json(s);
  CHECK(json["stable"] == true);
  CHECK_FALSE(json.contains("unstable"));
}

TEST_CASE("A server that serves 80% of its arrivals is unstable, and says by how much",
          "[study][steady_state]") {
  // 1 req/s offered, 0.8 req/s served: the backlog grows 0.2 requests a second.
  const auto s = servesim::analyze_steady_state(single_server(1000, 1.25));
  CHECK_FALSE(s.stable);
  // The backlog grows throughout: MSER finds no end to the warm-up in the first half.
  CHECK_FALSE(s.warmup_detected);
  CHECK(s.served_ratio == Approx(0.8).epsilon(0.01));
  CHECK(s.backlog_growth_per_s == Approx(0.2).epsilon(0.02));
  CHECK(s.backlog_growth_ratio == Approx(0.2).epsilon(0.02));
  CHECK(s.backlog_growth_t > 100);  // on a line
  CHECK_THAT(s.reason,
             Catch::StartsWith("serves 0.8 of 1 req/s offered (80") &&
                 Catch::EndsWith(
                     "% < " + servesim::three_significant((0.95 - s.filling_share) * 100) + "%)"));
  // The queue had begun to grow in the run's first tenth: a little of the shortfall is
  // allowed as filling, far from the 20% missing.
  CHECK(s.filling_share > 0);
  CHECK(s.filling_share < 0.05);
  CHECK(servesim::steady_state_json(s)["unstable"] == s.reason);
}

TEST_CASE("A run shorter than twice its time in system is undecided, and says how long to run",
          "[study][steady_state]") {
  // An infinite server (no queue at all) whose requests take 520 s, over a run of 1,000
  // arrivals a second apart: the system fills until 520 s, past the middle arrival (500), so
  // the run cannot show a steady state. It is not overloaded either: undecided.
  std::vector<RequestTiming> requests;
  for (int i = 0; i < 1000; ++i)
    requests.push_back({double(i), double(i), i + 520.0, 100, 10});
  const auto s = servesim::analyze_steady_state(requests);
  CHECK_FALSE(s.warmup_detected);
  CHECK(s.served_ratio >= 0.9);
  CHECK_FALSE(s.stable);
  CHECK(s.undecided);
  CHECK_THAT(s.reason, Catch::StartsWith("no steady state within 1000 requests"));
  // Twice the run (2,000) beats 2.5 x 520 s at 1 req/s (1,300).
  CHECK(s.requests_to_settle == 2000);
  const auto json = servesim::steady_state_json(s);
  CHECK(json["undecided"] == true);
  CHECK(json["requests_to_settle"] == 2000);
  // A time in system of a third of the run settles: stable, not undecided.
  std::vector<RequestTiming> third;
  for (int i = 0; i < 1000; ++i)
    third.push_back({double(i), double(i), i + 333.0, 100, 10});
  const auto settled = servesim::analyze_steady_state(third);
  CHECK(settled.warmup_detected);
  CHECK(settled.stable);
  CHECK_FALSE(settled.undecided);
  CHECK(servesim::steady_state_json(settled)["undecided"] == false);
  CHECK(servesim::steady_state_json(settled)["requests_to_settle"] == 0);
}

TEST_CASE("A backlog growing slowly is caught by its trend, not by the served share",
          "[study][steady_state]") {
  // Served 1 / 1.03 = 97.1% of the offered rate: within the 5% tolerance on the served
  // share, but the backlog grows 2.9% of the offered rate a second, above 2%, on a line.
  const auto slow = servesim::analyze_steady_state(single_server(4000, 1.03));
  CHECK(slow.served_ratio > 0.95);
  CHECK(slow.backlog_growth_ratio == Approx(0.03 / 1.03).epsilon(0.05));
  CHECK_FALSE(slow.stable);
  CHECK_THAT(slow.reason, Catch::StartsWith("the backlog grows") && Catch::Contains("> 2%"));
  // 1% short: within the tolerances of both the served share and the trend, but a backlog
  // that grows through the whole run leaves MSER no end to the warm-up.
  const auto slight = servesim::analyze_steady_state(single_server(4000, 1.01));
  CHECK(slight.served_ratio >= 0.99 - 1e-3);
  CHECK_FALSE(slight.warmup_detected);
  CHECK_FALSE(slight.stable);
  CHECK_THAT(slight.reason, Catch::StartsWith("no steady state within 4000 requests"));
  // A server with room to spare has no backlog at all.
  const auto idle = servesim::analyze_steady_state(single_server(4000, 0.5));
  CHECK(idle.stable);
  CHECK(idle.backlog_growth_per_s == 0);
}

TEST_CASE("A number in the system that grows while the time in system does not is a fill-up",
          "[study][steady_state]") {
  // An infinite server whose requests take 700 s, over 1,000 arrivals a second apart: the
  // number in the system grows until 700 s, well inside the judged second half, but each
  // request is in the system exactly as long as the one before (Little's law: the number
  // grows with the time since the start, not with a queue). Undecided, not unstable.
  std::vector<RequestTiming> filling;
  for (int i = 0; i < 1000; ++i)
    filling.push_back({double(i), double(i), i + 700.0, 100, 10});
  const auto s = servesim::analyze_steady_state(filling);
  CHECK_FALSE(s.warmup_detected);
  CHECK(s.backlog_growth_ratio > 0.02);
  CHECK_FALSE(s.stable);
  CHECK(s.undecided);
  CHECK_THAT(s.reason, Catch::StartsWith("no steady state within 1000 requests: the number in "
                                         "the system grows") &&
                           Catch::EndsWith("while the time in system does not (a system still "
                                           "filling up)"));
  // The same growth with each request waiting longer than the one before is a backlog.
  const auto queue = servesim::analyze_steady_state(single_server(1000, 1.25));
  CHECK_FALSE(queue.undecided);
  std::vector<RequestTiming> waiting = filling;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    waiting[i].first_scheduled_s += 0.2 * static_cast<double>(i);
    waiting[i].completion_s += 0.2 * static_cast<double>(i);
  }
  const auto backlog = servesim::analyze_steady_state(waiting);
  INFO(backlog.reason);
  CHECK_FALSE(backlog.stable);
  CHECK_FALSE(backlog.undecided);
}

TEST_CASE("Rejected requests are offered but never in the system, and tiny runs are stable",
          "[study][steady_state]") {
  auto requests = single_server(100, 0.5);
  for (auto& r : requests) {
    if (r.arrival_s >= 50) r.first_scheduled_s = r.completion_s = std::nan("");
  }
  const auto s = servesim::analyze_steady_state(requests);
  CHECK(s.served_ratio < 0.6);  // half the window's arrivals never complete
  CHECK_FALSE(s.stable);
  CHECK(servesim::analyze_steady_state({}).stable);
  CHECK(servesim::analyze_steady_state({{1, 1, 2, 10, 10}}).window_end_s == 0);
}

TEST_CASE("An unstable point meets no SLO: close calls and completions needed",
          "[study][steady_state]") {
  servesim::SloTarget target;
  servesim::add_slo_term(target, "ttft_p99=0.5", "--slo");
  nlohmann::json summary{{"requests_completed", 100},
                         {"requests_rejected", 0},
                         {"ttft_s", {{"p99", 0.2}}},
                         {"steady_state", {{"served_ratio", 0.5}, {"unstable", "serves 1 of 2"}}}};
  const auto verdict = servesim::judge(target, summary);
  CHECK_FALSE(verdict.met);
  CHECK_FALSE(verdict.fails_at_any_load);  // a lower load may be stable
  REQUIRE(verdict.violations.size() == 1);
  CHECK(verdict.violations[0] == "unstable: serves 1 of 2");
  CHECK(verdict.worst_ratio == Approx(2));
  summary["steady_state"].erase("unstable");
  CHECK(servesim::judge(target, summary).met);

  CHECK_FALSE(servesim::close_call(target, summary, 0.05));  // 0.2 is far from 0.5
  summary["ttft_s"]["p99"] = 0.51;
  CHECK(servesim::close_call(target, summary, 0.05));
  summary["ttft_s"]["p99"] = 0.53;
  CHECK_FALSE(servesim::close_call(target, summary, 0.05));

  CHECK(servesim::completions_needed(target) == 1000);  // 10 / (1 - 0.99)
  servesim::SloTarget mild;
  servesim::add_slo_term(mild, "tpot_p90=0.1", "--slo");
  CHECK(servesim::completions_needed(mild) == 100);
  servesim::add_slo_term(mild, "e2e_p50=10", "--slo");
  CHECK(servesim::completions_needed(mild) == 100);
  servesim::SloTarget median;
  servesim::add_slo_term(median, "e2e_p50=10", "--slo");
  CHECK(servesim::completions_needed(median) == 20);
  servesim::add_slo_term(median, "attainment=0.95", "--slo");
  CHECK(servesim::completions_needed(median) == 200);
}

TEST_CASE("An SLO below what one request alone takes is unreachable", "[study][steady_state]") {
  servesim::SloTarget target;
  servesim::add_slo_term(target, "tpot_p99=0.05", "--slo");
  servesim::add_slo_term(target, "ttft_max=2", "--slo");
  const nlohmann::json alone{{"requests_completed", 400},
                             {"requests_rejected", 0},
                             {"ttft_s", {{"max", 0.3}}},
                             {"tpot_s", {{"p99", 0.068}}},
                             {"e2e_s", {{"max", 40.0}}}};
  CHECK(servesim::unreachable(target, alone) ==
        std::optional<std::string>("unreachable: TPOT p99 at batch 1 is 68 ms > 50 ms"));
  nlohmann::json long_prompt = alone;
  long_prompt["ttft_s"]["max"] = 2.5;
  CHECK(servesim::unreachable(target, long_prompt) ==
        std::optional<std::string>("unreachable: TPOT p99 at batch 1 is 68 ms > 50 ms; TTFT max "
                                   "(the longest prompt's prefill alone) is 2500 ms > 2000 ms"));
  nlohmann::json fast = alone;
  fast["tpot_s"]["p99"] = 0.04;
  CHECK_FALSE(servesim::unreachable(target, fast));
  // A run that does not fit says nothing here: the search reports it.
  CHECK_FALSE(servesim::unreachable(target, {{"does_not_fit", "too big"}}));
}

TEST_CASE("Figures are written with three significant digits", "[study][steady_state]") {
  CHECK(servesim::three_significant(41.649) == "41.6");
  CHECK(servesim::three_significant(2512) == "2510");
  CHECK(servesim::three_significant(0.068 * 1e3) == "68");
  CHECK(servesim::three_significant(0.79964) == "0.8");
  CHECK(servesim::three_significant(0) == "0");
}

TEST_CASE("Prices per token and per request at the served rate", "[study][steady_state]") {
  // 4 GPUs at $2/hour serve 10 req/s of 1,000 prompt and 200 output tokens each.
  const nlohmann::json summary{{"steady_state",
                                {{"offered_requests_per_s", 5.0},
                                 {"offered_input_tokens_per_s", 5000.0},
                                 {"offered_output_tokens_per_s", 1000.0}}}};
  const auto p = servesim::serving_prices(2.0, 4, 10, summary);
  REQUIRE(p);
  CHECK(p->usd_per_hour == 8);
  // 36,000 requests an hour: 36M prompt tokens, 7.2M output tokens.
  CHECK(p->usd_per_thousand_requests == Approx(8.0 / 36));
  CHECK(p->usd_per_million_input_tokens == Approx(8.0 / 36));
  CHECK(p->usd_per_million_output_tokens == Approx(8.0 / 7.2));
  CHECK(p->usd_per_million_tokens == Approx(8.0 / 43.2));
  CHECK(servesim::serving_prices_json(*p)["usd_per_million_tokens"] == p->usd_per_million_tokens);
  CHECK_FALSE(servesim::serving_prices(2.0, 4, 10, nlohmann::json::object()));
}
