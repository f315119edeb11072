#include <cmath>

#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/study/rate_search.h"
#include "sim/study/replica_search.h"
#include "sim/study/slo.h"

namespace {

// A run summary with the fields an SLO reads.
nlohmann::json summary(double ttft_p99_s, double rejected = 0) {
  return {{"requests_completed", 100},
          {"requests_rejected", rejected},
          {"ttft_s", {{"p99", ttft_p99_s}, {"mean", ttft_p99_s / 2}}},
          {"tpot_s", {{"p99", 0.01}}}};
}

servesim::SloTarget ttft_p99(double limit_s) {
  servesim::SloTarget target;
  servesim::add_slo_term(target, "ttft_p99=" + std::to_string(limit_s), "--slo");
  return target;
}

// P99 TTFT of a queue that saturates at 10 req/s: 0.1 / (1 - rate / 10), infinite beyond.
servesim::RateEvaluator queue_like(int* evaluations = nullptr) {
  return [evaluations](const std::vector<double>& rates) {
    std::vector<nlohmann::json> out;
    for (const double rate : rates) {
      if (evaluations != nullptr) ++*evaluations;
      out.push_back(summary(rate < 10 ? 0.1 / (1 - rate / 10) : 1e9));
    }
    return out;
  };
}

}  // namespace

TEST_CASE("SLO terms parse and judge summaries", "[study]") {
  servesim::SloTarget target;
  servesim::add_slo_term(target, "ttft_p99=0.5", "--slo");
  servesim::add_slo_term(target, "tpot_p99=0.05", "--slo");
  CHECK(servesim::judge(target, summary(0.4)).met);
  const auto verdict = servesim::judge(target, summary(0.6));
  CHECK_FALSE(verdict.met);
  REQUIRE(verdict.violations.size() == 1);
  CHECK_THAT(verdict.violations[0], Catch::Contains("ttft_p99"));
  CHECK(verdict.worst_ratio == Approx(1.2));
  CHECK_FALSE(servesim::judge(target, summary(0.1, 1)).met);  // a rejection fails every SLO
  CHECK_THROWS_WITH(servesim::add_slo_term(target, "ttft_p42=1", "--slo"),
                    Catch::Contains("unknown SLO"));
  CHECK_THROWS_WITH(servesim::add_slo_term(target, "ttft_p99=-1", "--slo"),
                    Catch::Contains("positive"));
  CHECK_THROWS_WITH(servesim::add_slo_term(target, "attainment=1.5", "--slo"),
                    Catch::Contains("fraction"));
}

TEST_CASE("Attainment counts rejected requests as missing the SLO", "[study]") {
  nlohmann::json s = summary(0.1, 25);
  s["requests_completed"] = 75;
  s["slo_attainment"] = 0.8;
  CHECK(servesim::attainment_of(s) == Approx(0.6));
  servesim::SloTarget target;
  servesim::add_slo_term(target, "attainment=0.9", "--slo");
  CHECK_THROWS_WITH(servesim::judge(target, summary(0.1)), Catch::Contains("--slo-ttft"));
}

TEST_CASE("Rate search finds the boundary within its precision", "[study]") {
  // 0.1 / (1 - r/10) <= 0.25  <=>  r <= 6.
  servesim::RateSearchOptions options;
  options.start_rate_per_s = 1;
  options.relative_precision = 0.01;
  for (const std::size_t per_round : {1, 3, 5}) {
    options.points_per_round = per_round;
    const auto result = servesim::search_highest_rate(ttft_p99(0.25), options, queue_like());
    REQUIRE(result.outcome == servesim::RateSearchResult::Outcome::Found);
    CHECK(result.passing_rate_per_s <= 6.0);
    CHECK(result.failing_rate_per_s > 6.0);
    CHECK((result.failing_rate_per_s - result.passing_rate_per_s) / result.passing_rate_per_s <=
          0.01);
    CHECK(result.best()->rate_per_s == result.passing_rate_per_s);
  }
  // Starting above the boundary, it halves down first.
  options.start_rate_per_s = 50;
  const auto from_above = servesim::search_highest_rate(ttft_p99(0.25), options, queue_like());
  CHECK(from_above.passing_rate_per_s == Approx(6).epsilon(0.01));
}

TEST_CASE("Rate search says when no rate or every rate meets the SLO", "[study]") {
  servesim::RateSearchOptions options;
  options.start_rate_per_s = 1;
  options.min_rate_per_s = 0.01;
  options.max_rate_per_s = 1000;
  const auto never = servesim::search_highest_rate(ttft_p99(0.05), options, queue_like());
  CHECK(never.outcome == servesim::RateSearchResult::Outcome::NeverMet);
  REQUIRE(never.best() != nullptr);
  CHECK(never.best()->rate_per_s < 0.02);  // the closest to passing is the lowest rate
  const auto always =
      servesim::search_highest_rate(ttft_p99(0.5), options, [](const std::vector<double>& rates) {
        return std::vector<nlohmann::json>(rates.size(), summary(0.1));
      });
  CHECK(always.outcome == servesim::RateSearchResult::Outcome::AlwaysMet);
  CHECK(always.passing_rate_per_s >= 1000);
}

TEST_CASE("Rate search stops at its point budget", "[study]") {
  servesim::RateSearchOptions options;
  options.relative_precision = 1e-9;
  options.max_points = 12;
  int evaluations = 0;
  const auto result =
      servesim::search_highest_rate(ttft_p99(0.25), options, queue_like(&evaluations));
  CHECK(result.outcome == servesim::RateSearchResult::Outcome::Unresolved);
  CHECK(evaluations <= 14);
  CHECK(result.passing_rate_per_s <= 6.0);
}

TEST_CASE("Replica search finds the fewest replicas of each shape", "[study]") {
  const std::vector<servesim::ReplicaShape> shapes{{"fast", 1, 1, std::nullopt},
                                                   {"slow", 2, 1, std::nullopt}};
  const auto evaluate = [&](const std::vector<servesim::ReplicaTrial>& trials) {
    std::vector<nlohmann::json> out;
    for (const auto& trial : trials) {
      const std::int64_t needed = trial.shape == 0 ? 7 : 300;
      out.push_back(summary(trial.replicas >= needed ? 0.1 : 1.0));
    }
    return out;
  };
  const auto results = servesim::search_fewest_replicas(ttft_p99(0.5), shapes, 64, evaluate);
  REQUIRE(results.size() == 2);
  REQUIRE(results[0].replicas);
  CHECK(*results[0].replicas == 7);
  CHECK(results[0].answer()->replicas == 7);
  CHECK(results[0].points.size() <= 6);  // 1, 2, 4, 8 then bisection 6, 7
  CHECK_FALSE(results[1].replicas);      // needs 300 > 64
  CHECK(results[1].points.back().replicas == 64);
}

TEST_CASE("Rate search never goes past its minimum or maximum rate", "[study]") {
  servesim::RateSearchOptions options;
  options.start_rate_per_s = 1;
  options.min_rate_per_s = 0.2;  // 1, then 0.5, 0.25 and 0.2, not 0.125
  options.max_rate_per_s = 5;    // 1, then 2, 4 and 5, not 8
  std::vector<double> tried;
  const auto recording = [&](double ttft_p99_s) {
    return [&tried, ttft_p99_s](const std::vector<double>& rates) {
      tried.insert(tried.end(), rates.begin(), rates.end());
      return std::vector<nlohmann::json>(rates.size(), summary(ttft_p99_s));
    };
  };
  const auto never = servesim::search_highest_rate(ttft_p99(0.5), options, recording(1.0));
  CHECK(never.outcome == servesim::RateSearchResult::Outcome::NeverMet);
  CHECK(tried == std::vector<double>{1, 0.5, 0.25, 0.2});
  tried.clear();
  const auto always = servesim::search_highest_rate(ttft_p99(0.5), options, recording(0.1));
  CHECK(always.outcome == servesim::RateSearchResult::Outcome::AlwaysMet);
  CHECK(tried == std::vector<double>{1, 2, 4, 5});
  CHECK(always.passing_rate_per_s == 5);
}

TEST_CASE("Rate search stops at a failure no lower rate removes", "[study]") {
  // Every rate rejects the same requests: halving would only repeat it down to the minimum.
  servesim::RateSearchOptions options;
  options.start_rate_per_s = 8;
  int evaluations = 0;
  const auto rejecting = [&](const std::vector<double>& rates) {
    evaluations += static_cast<int>(rates.size());
    return std::vector<nlohmann::json>(rates.size(), summary(0.01, 3));
  };
  const auto result = servesim::search_highest_rate(ttft_p99(0.5), options, rejecting);
  CHECK(result.outcome == servesim::RateSearchResult::Outcome::NeverMet);
  CHECK(evaluations == 1);
  REQUIRE(result.best() != nullptr);
  CHECK(result.best()->verdict.fails_at_any_load);
  CHECK_THAT(result.best()->verdict.violations.front(), Catch::Contains("3 requests rejected"));
}

TEST_CASE("A point that does not fit fails at any load and ends its shape's search", "[study]") {
  const nlohmann::json unfit{{"does_not_fit", "the model does not fit on one GPU"}};
  const auto verdict = servesim::judge(ttft_p99(0.5), unfit);
  CHECK_FALSE(verdict.met);
  CHECK(verdict.fails_at_any_load);
  CHECK(verdict.violations == std::vector<std::string>{"does not fit: the model does not fit on "
                                                       "one GPU"});
  const std::vector<servesim::ReplicaShape> shapes{{"small", 1, 1, std::nullopt},
                                                   {"big", 4, 1, std::nullopt}};
  const auto results = servesim::search_fewest_replicas(
      ttft_p99(0.5), shapes, 64, [&](const std::vector<servesim::ReplicaTrial>& trials) {
        std::vector<nlohmann::json> out;
        for (const auto& trial : trials)
          out.push_back(trial.shape == 0 ? unfit : summary(trial.replicas >= 3 ? 0.1 : 1.0));
        return out;
      });
  CHECK(results[0].points.size() == 1);
  CHECK_FALSE(results[0].replicas);
  CHECK(results[1].replicas == 3);
}

TEST_CASE("A point its run leaves undecided stops its shape's search without adding replicas",
          "[study]") {
  // Whatever the count, 1 replica is overloaded and 2 or more are still filling up when the
  // run ends (their requests take too long for it): more replicas would not settle them.
  nlohmann::json filling = summary(0.1);
  filling["steady_state"] = {{"stable", false},
                             {"served_ratio", 0.93},
                             {"unstable", "no steady state within 1000 requests"},
                             {"undecided", true},
                             {"requests_to_settle", 2400}};
  const auto verdict = servesim::judge(ttft_p99(0.5), filling);
  CHECK_FALSE(verdict.met);
  CHECK(verdict.undecided);
  CHECK_FALSE(verdict.fails_at_any_load);
  CHECK(verdict.requests_to_settle == 2400);
  CHECK_THAT(verdict.violations.front(),
             Catch::StartsWith("undecided: ") && Catch::Contains("at least 2400 requests"));
  // A point that misses the SLO already while it fills misses it at any length: decided.
  const auto missed = servesim::judge(ttft_p99(0.05), filling);
  CHECK_FALSE(missed.met);
  CHECK_FALSE(missed.undecided);
  CHECK(missed.requests_to_settle == 0);
  CHECK_THAT(missed.violations.front(),
             Catch::StartsWith("not settled (no steady state") &&
                 Catch::EndsWith("the SLO is missed already while it fills"));
  CHECK_THAT(missed.violations.back(), Catch::StartsWith("ttft_p99 = 0.1 s > 0.05 s"));
  const std::vector<servesim::ReplicaShape> shapes{{"long", 4, 1, std::nullopt},
                                                   {"short", 1, 1, std::nullopt}};
  const auto results = servesim::search_fewest_replicas(
      ttft_p99(0.5), shapes, 1024, [&](const std::vector<servesim::ReplicaTrial>& trials) {
        std::vector<nlohmann::json> out;
        for (const auto& trial : trials) {
          if (trial.shape == 1) {
            out.push_back(summary(trial.replicas >= 3 ? 0.1 : 1.0));
          } else {
            out.push_back(trial.replicas == 1 ? summary(1.0) : filling);
          }
        }
        return out;
      });
  REQUIRE(results[0].points.size() == 2);  // 1, then 2: undecided, no 4, 8, ..., 1024
  CHECK_FALSE(results[0].replicas);
  REQUIRE(results[0].undecided() != nullptr);
  CHECK(results[0].undecided()->replicas == 2);
  CHECK(results[1].replicas == 3);
  CHECK(results[1].undecided() == nullptr);
}

TEST_CASE("Rate search takes an undecided rate as its bound and says so", "[study]") {
  // Up to 6 req/s the runs pass; from 6 to 8 they are still filling when the run ends
  // (undecided); above 8 they fail.
  nlohmann::json filling = summary(0.1);
  filling["steady_state"] = {{"stable", false},
                             {"served_ratio", 0.93},
                             {"unstable", "no steady state within 1000 requests"},
                             {"undecided", true},
                             {"requests_to_settle", 3000}};
  const servesim::RateEvaluator evaluate = [&](const std::vector<double>& rates) {
    std::vector<nlohmann::json> out;
    for (const double rate : rates)
      out.push_back(rate <= 6 ? summary(0.1) : rate <= 8 ? filling : summary(1.0));
    return out;
  };
  servesim::RateSearchOptions options;
  options.start_rate_per_s = 1;
  options.relative_precision = 0.02;
  const auto result = servesim::search_highest_rate(ttft_p99(0.5), options, evaluate);
  REQUIRE(result.outcome == servesim::RateSearchResult::Outcome::Found);
  CHECK(result.passing_rate_per_s <= 6);
  CHECK(result.passing_rate_per_s > 5.8);
  REQUIRE(result.undecided() != nullptr);
  CHECK(result.undecided()->rate_per_s == result.failing_rate_per_s);
  CHECK(result.undecided()->verdict.requests_to_settle == 3000);
  // A search whose failures are all decided has no undecided bound.
  CHECK(servesim::search_highest_rate(ttft_p99(0.25), options, queue_like()).undecided() ==
        nullptr);
}
