#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/study/layout_search.h"
#include "sim/study/pareto_front.h"
#include "sim/study/slo.h"

namespace {

using servesim::RoleCounts;

servesim::SloTarget ttft_p99(double limit_s) {
  servesim::SloTarget target;
  servesim::add_slo_term(target, "ttft_p99=" + std::to_string(limit_s), "--slo");
  return target;
}

// A deployment meets a TTFT p99 of 1 s when it has at least `need` of each role.
nlohmann::json summary_for(RoleCounts counts, RoleCounts need) {
  const bool met = counts.prefill >= need.prefill && counts.decode >= need.decode;
  return {{"requests_completed", 100},
          {"requests_rejected", 0},
          {"ttft_s", {{"p99", met ? 0.5 : 2.0}}}};
}

struct Recorded {
  std::vector<std::vector<servesim::LayoutTrial>> rounds;
};

servesim::LayoutEvaluator needing(std::vector<RoleCounts> need, Recorded& recorded) {
  return [need, &recorded](const std::vector<servesim::LayoutTrial>& trials) {
    recorded.rounds.push_back(trials);
    std::vector<nlohmann::json> out;
    for (const auto& trial : trials)
      out.push_back(summary_for(trial.counts, need[trial.layout]));
    return out;
  };
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<servesim::RoleCounts> {
  static std::string convert(const servesim::RoleCounts& c) {
    return std::to_string(c.prefill) + "p" + std::to_string(c.decode) + "d";
  }
};
}  // namespace Catch

TEST_CASE("rate matching covers each role's tokens with whole replicas", "[study]") {
  // 10 req/s of 1,000-token prompts and 200-token outputs: 10,000 prompt tokens/s on
  // replicas of 4,000 (3), 2,000 output tokens/s on replicas of 2,000 (exactly 1).
  CHECK(servesim::rate_matched_counts(10, 1000, 200, 4000, 2000) == RoleCounts{3, 1});
  CHECK(servesim::rate_matched_counts(10, 1000, 200, 10000, 1999) == RoleCounts{1, 2});
  CHECK(servesim::rate_matched_counts(0.001, 10, 1, 1e6, 1e6) == RoleCounts{1, 1});
}

TEST_CASE("the layout search finds the fewest replicas of each role", "[study]") {
  Recorded recorded;
  // Three layouts: one needing 5p3d from a 1p1d start, one whose start already passes with
  // spare replicas, one needing exactly its start.
  const std::vector<RoleCounts> need{{5, 3}, {2, 1}, {4, 4}};
  const std::vector<RoleCounts> starts{{1, 1}, {6, 6}, {4, 4}};
  const auto results =
      servesim::search_fewest_layouts(ttft_p99(1), starts, 64, needing(need, recorded));
  REQUIRE(results.size() == 3);
  for (std::size_t l = 0; l < need.size(); ++l) {
    INFO("layout " << l);
    REQUIRE(results[l].answer);
    CHECK(*results[l].answer == need[l]);
    const servesim::LayoutPoint* answer = results[l].answer_point();
    REQUIRE(answer != nullptr);
    CHECK(answer->verdict.met);
    // One fewer of either role was tried and failed (a role at 1 has nothing to try).
    const auto failed_with = [&](RoleCounts counts) {
      for (const auto& point : results[l].points) {
        if (point.counts == counts && !point.verdict.met) return true;
      }
      return false;
    };
    bool fewer_prefill = need[l].prefill == 1;
    bool fewer_decode = need[l].decode == 1;
    for (const auto& point : results[l].points) {
      CHECK(point.verdict.met ==
            (point.counts.prefill >= need[l].prefill && point.counts.decode >= need[l].decode));
      if (point.counts.prefill == need[l].prefill - 1 && point.counts.decode >= need[l].decode) {
        fewer_prefill = fewer_prefill || failed_with(point.counts);
      }
      if (point.counts.decode == need[l].decode - 1 && point.counts.prefill == need[l].prefill) {
        fewer_decode = fewer_decode || failed_with(point.counts);
      }
    }
    CHECK(fewer_prefill);
    CHECK(fewer_decode);
  }
  // Layout 0 doubles both roles from its start (1p1d, 2p2d, 4p4d, 8p8d) until it passes, then
  // bisects prefill in (0, 8] with 8 decode replicas, then decode in (0, 8] with 5 prefill
  // replicas.
  std::vector<RoleCounts> tried;
  for (const auto& point : results[0].points)
    tried.push_back(point.counts);
  CHECK(tried ==
        std::vector<RoleCounts>{
            {1, 1}, {2, 2}, {4, 4}, {8, 8}, {4, 8}, {6, 8}, {5, 8}, {5, 4}, {5, 2}, {5, 3}});
  // Side by side: one point per unfinished layout per round.
  CHECK(recorded.rounds.front().size() == 3);
  for (const auto& round : recorded.rounds) {
    for (std::size_t i = 1; i < round.size(); ++i)
      CHECK(round[i - 1].layout < round[i].layout);
  }
}

TEST_CASE("the layout search stops at the maximum and at failures at any load", "[study]") {
  Recorded recorded;
  const auto beyond =
      servesim::search_fewest_layouts(ttft_p99(1), {{1, 1}}, 4, needing({{9, 1}}, recorded));
  CHECK_FALSE(beyond[0].answer);
  CHECK(beyond[0].points.back().counts == RoleCounts{4, 4});  // both at the maximum
  CHECK(beyond[0].points.size() == 3);                        // 1p1d, 2p2d, 4p4d

  // A start beyond the maximum is cut to it.
  const auto cut =
      servesim::search_fewest_layouts(ttft_p99(1), {{10, 2}}, 4, needing({{3, 2}}, recorded));
  CHECK(cut[0].points.front().counts == RoleCounts{4, 2});
  CHECK(cut[0].answer == RoleCounts{3, 2});

  // A layout that does not fit is tried once.
  int evaluations = 0;
  const auto unfit = servesim::search_fewest_layouts(
      ttft_p99(1), {{1, 1}}, 64, [&](const std::vector<servesim::LayoutTrial>& trials) {
        evaluations += static_cast<int>(trials.size());
        return std::vector<nlohmann::json>(trials.size(), {{"does_not_fit", "too big"}});
      });
  CHECK_FALSE(unfit[0].answer);
  CHECK(evaluations == 1);
  CHECK_THROWS_AS(
      servesim::search_fewest_layouts(ttft_p99(1), {{0, 1}}, 4, needing({{1, 1}}, recorded)),
      servesim::InvariantError);
}

TEST_CASE("the Pareto front keeps what nothing beats on both axes", "[study]") {
  using servesim::FrontCandidate;
  const std::vector<FrontCandidate> candidates{
      {100, 50},  // 0: beaten by 1 per user at the same per GPU
      {100, 60},  // 1: front (best per GPU)
      {80, 70},   // 2: front
      {80, 70},   // 3: equal to 2, which comes first
      {60, 65},   // 4: beaten by 2 on both
      {50, 90},   // 5: front (best per user)
      {40, 90},   // 6: beaten by 5 per GPU
  };
  CHECK(servesim::pareto_front(candidates) == std::vector<std::size_t>{1, 2, 5});
  CHECK(servesim::pareto_front({}).empty());
  CHECK(servesim::pareto_front({{1, 1}}) == std::vector<std::size_t>{0});
}
