#include <catch2/catch.hpp>

#include <map>

#include "sim/core/error.h"
#include "sim/workload/content_namespaces.h"
#include "sim/workload/prefix_reuse.h"
#include "sim/workload/session_source.h"
#include "tests/support/workload_test_support.h"
#include "tests/workload/session_test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

constexpr double kServiceS = 1.0;

std::string multi_turn_spec(const std::string& arrival, const std::string& lengths_extra = "",
                            const std::string& stop = R"("num_requests": 1000)") {
  return R"({"arrival": )" + arrival + ", " + stop + R"(,
      "lengths": {"distribution": "multi_turn",
                  "turns": {"distribution": "fixed", "count": 3},
                  "user": {"distribution": "fixed", "tokens": 100},
                  "output": {"distribution": "fixed", "tokens": 50})" +
         lengths_extra + "}}";
}

std::vector<test::ServedRequest> run(const std::string& text, std::uint64_t seed = 5,
                                     double service_s = kServiceS,
                                     const test::ServePolicy& policy = nullptr) {
  const auto source = make_workload_source(test::spec_from_text(text), RngStreams(seed));
  auto served = test::serve(*source, SimTime::from_seconds(service_s), policy);
  CHECK(source->exhausted());
  return served;
}

// A turn's session, told by its first segment after any system prompt.
std::map<std::uint64_t, std::vector<test::ServedRequest>> by_session(
    const std::vector<test::ServedRequest>& served, std::size_t first_segment = 0) {
  std::map<std::uint64_t, std::vector<test::ServedRequest>> sessions;
  for (const auto& s : served)
    sessions[s.content.at(first_segment).id].push_back(s);
  return sessions;
}

}  // namespace

TEST_CASE("multi_turn: each turn's prompt is the conversation so far plus new user tokens",
          "[workload]") {
  // Sessions start at 0, 10, 20 s; 1 s of service and 2 s of thinking: turns 3 s apart.
  const auto served = run(multi_turn_spec(R"({"process": "constant", "rate_per_s": 0.1})",
                                          R"(, "think_time": {"distribution": "fixed",
                                                "seconds": 2})",
                                          R"("duration_s": 30)"));
  REQUIRE(served.size() == 9);
  const auto sessions = by_session(served);
  REQUIRE(sessions.size() == 3);
  for (const auto& [id, turns] : sessions) {
    REQUIRE(turns.size() == 3);
    for (std::size_t k = 0; k < 3; ++k) {
      INFO("session starting at " << turns[0].request.arrival.seconds() << " s, turn " << k);
      const auto& t = turns[k];
      CHECK(t.request.prompt_tokens == static_cast<std::int64_t>(k) * 150 + 100);
      CHECK(t.request.output_tokens == 50);
      REQUIRE(t.content.size() == 2 * k + 2);
      CHECK(t.content[2 * k].tokens == 100);     // its own user tokens
      CHECK(t.content[2 * k + 1].tokens == 50);  // then its output, as a segment
      if (k > 0) {
        // Every earlier segment in order: the previous turn's content is a prefix.
        CHECK(std::equal(turns[k - 1].content.begin(), turns[k - 1].content.end(),
                         t.content.begin()));
        // Closed loop: think time after the previous turn finished.
        CHECK(t.request.arrival == turns[k - 1].done + SimTime::from_seconds(2));
      }
    }
  }
  // Ids in arrival order, arrivals in order (session 1's start at 10 s was handed out before
  // session 0's second turn, released at 1 s for 3 s, and taken back).
  for (std::size_t i = 0; i < served.size(); ++i) {
    CHECK(served[i].request.id == static_cast<std::int64_t>(i));
    if (i > 0) CHECK(served[i].request.arrival >= served[i - 1].request.arrival);
  }
  CHECK(served[1].request.arrival.ns() == 3'000'000'000);
  CHECK(served[3].request.arrival.ns() == 10'000'000'000);
}

TEST_CASE("multi_turn: an unbounded cache hits every earlier turn (closed form)", "[workload]") {
  const auto served = run(multi_turn_spec(R"({"process": "poisson", "rate_per_s": 0.5})",
                                          R"(, "think_time": {"distribution": "exponential",
                                                "mean_s": 3})"));
  REQUIRE(served.size() == 1000);
  for (const std::int64_t block : {1, 16, 64}) {
    INFO("block size " << block);
    UnboundedPrefixReuse reuse(block);
    std::int64_t expected = 0;
    for (const auto& s : served) {
      const std::int64_t earlier = s.request.prompt_tokens - 100;  // k x 150
      expected += (earlier / block) * block;
      reuse.add(s.content, s.request.prompt_tokens);
    }
    CHECK(reuse.hit_tokens() == expected);
  }
}

TEST_CASE("multi_turn: a shared system prompt starts every session", "[workload]") {
  const auto served = run(multi_turn_spec(R"({"process": "poisson", "rate_per_s": 1})",
                                          R"(, "system_prompt_tokens": 300)"));
  REQUIRE(served.size() == 1000);
  for (const auto& s : served) {
    REQUIRE(s.content.size() >= 3);
    CHECK(s.content[0] == ContentSegment{mix_ids(kSessionContent, 0), 300});
    CHECK((s.request.prompt_tokens - 400) % 150 == 0);
  }
  CHECK(by_session(served, 1).size() >= 333);
}

TEST_CASE("multi_turn: a cut turn enters the context as served, a rejected one ends its session",
          "[workload]") {
  const std::string four_turns = R"({"arrival": {"process": "constant", "rate_per_s": 0.01},
      "num_requests": 6,
      "lengths": {"distribution": "multi_turn",
                  "turns": {"distribution": "fixed", "count": 4},
                  "user": {"distribution": "fixed", "tokens": 100},
                  "output": {"distribution": "fixed", "tokens": 50}}})";
  // Outputs cut to 20 tokens: turn k's prompt is k x 120 + 100.
  const auto cut = run(four_turns, 5, kServiceS,
                       [](const RequestSpec&) { return std::optional<std::int64_t>(20); });
  REQUIRE(cut.size() == 6);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(cut[k].request.prompt_tokens == static_cast<std::int64_t>(k) * 120 + 100);
    if (k > 0) CHECK(cut[k].content[2 * k - 1].tokens == 20);
    CHECK(cut[k].content.back().tokens == 50);  // asked for 50; the cache sees what was served
  }
  // Prompts over 300 tokens rejected: each session's third turn (400) ends it.
  const auto rejected = run(four_turns, 5, kServiceS, [](const RequestSpec& r) {
    return r.prompt_tokens > 300 ? std::nullopt : std::optional<std::int64_t>(r.output_tokens);
  });
  REQUIRE(rejected.size() == 6);
  const auto sessions = by_session(rejected);
  REQUIRE(sessions.size() == 2);
  for (const auto& [id, turns] : sessions) {
    REQUIRE(turns.size() == 3);
    CHECK_FALSE(turns[1].rejected);
    CHECK(turns[2].rejected);
  }
}

TEST_CASE("multi_turn: a seed gives the same sessions however fast the server answers",
          "[workload]") {
  const std::string spec = R"({"arrival": {"process": "poisson", "rate_per_s": 2},
      "num_requests": 400,
      "lengths": {"distribution": "multi_turn",
                  "turns": {"distribution": "uniform", "min": 1, "max": 8},
                  "user": {"distribution": "lognormal", "mean": 120, "std": 80, "max": 1000},
                  "output": {"distribution": "uniform", "min": 1, "max": 300},
                  "think_time": {"distribution": "lognormal", "mean_s": 5, "std_s": 4,
                                 "max_s": 60}}})";
  const auto lengths_of = [](const std::vector<test::ServedRequest>& served) {
    std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> out;
    for (const auto& s : served)
      out[s.content.at(0).id].push_back({s.request.prompt_tokens, s.request.output_tokens});
    return out;
  };
  const auto fast = run(spec, 9, 0.5);
  const auto again = run(spec, 9, 0.5);
  REQUIRE(fast.size() == 400);
  REQUIRE(again.size() == 400);
  for (std::size_t i = 0; i < fast.size(); ++i) {
    CHECK(fast[i].request.arrival == again[i].request.arrival);
    CHECK(fast[i].content == again[i].content);
  }
  // A slower server reorders the turns, but each session's turns are the same (the sessions
  // cut short by num_requests aside).
  const auto slow = lengths_of(run(spec, 9, 7.0));
  const auto quick = lengths_of(fast);
  std::size_t compared = 0;
  for (const auto& [id, turns] : slow) {
    const auto it = quick.find(id);
    if (it == quick.end()) continue;
    const std::size_t n = std::min(turns.size(), it->second.size());
    for (std::size_t k = 0; k < n; ++k)
      CHECK(turns[k] == it->second[k]);
    compared += n;
  }
  CHECK(compared > 200);
  // Random think times: each turn still arrives its think time after its previous one ended.
  for (const auto& [id, turns] : by_session(fast)) {
    for (std::size_t k = 1; k < turns.size(); ++k)
      CHECK(turns[k].request.arrival >= turns[k - 1].done);
  }
  CHECK(run(spec, 10, 0.5)[5].content != fast[5].content);
}

TEST_CASE("multi_turn: closed-loop users start their next session a think time after the last",
          "[workload]") {
  const auto served = run(multi_turn_spec(R"({"process": "closed_loop", "users": 2,
                                              "think_time_s": 5})",
                                          "", R"("num_requests": 12)"));
  REQUIRE(served.size() == 12);
  // Two users, sessions of 3 turns with no think time inside: turns at 0, 1, 2 (ends at 3),
  // the next session at 8.
  CHECK(served[0].request.arrival.ns() == 0);
  CHECK(served[1].request.arrival.ns() == 0);
  CHECK(served[2].request.arrival.seconds() == 1.0);
  CHECK(served[6].request.arrival.seconds() == 8.0);
  CHECK(served[6].request.prompt_tokens == 100);
}

TEST_CASE("agentic: tool calls on a growing context, then a final answer", "[workload]") {
  const std::string spec = R"({"arrival": {"process": "poisson", "rate_per_s": 0.2},
      "num_requests": 300,
      "lengths": {"distribution": "agentic", "system_prompt_tokens": 1000,
                  "steps": {"distribution": "fixed", "count": 4},
                  "task": {"distribution": "fixed", "tokens": 200},
                  "tool_call": {"distribution": "fixed", "tokens": 30},
                  "tool_result": {"distribution": "fixed", "tokens": 400},
                  "final_answer": {"distribution": "fixed", "tokens": 250},
                  "tool_latency": {"distribution": "uniform", "min_s": 0.1, "max_s": 0.5}}})";
  const auto served = run(spec);
  REQUIRE(served.size() == 300);
  std::size_t complete = 0;
  for (const auto& [id, turns] : by_session(served, 1)) {
    for (std::size_t k = 0; k < turns.size(); ++k) {
      const auto& t = turns[k];
      CHECK(t.content[0].id == mix_ids(kSessionContent, 0));  // one tool prompt for all
      CHECK(t.request.prompt_tokens ==
            1000 + 200 + static_cast<std::int64_t>(k) * 30 + static_cast<std::int64_t>(k) * 400);
      CHECK(t.request.output_tokens == (k == 4 ? 250 : 30));
      if (k > 0) {
        const SimTime gap = t.request.arrival - turns[k - 1].done;
        CHECK(gap >= SimTime::from_seconds(0.1));
        CHECK(gap <= SimTime::from_seconds(0.5));
      }
    }
    CHECK(turns.size() <= 5);
    complete += turns.size() == 5 ? 1 : 0;
  }
  CHECK(complete >= 55);  // 300 requests: 60 sessions of 5 turns, a few cut at the end
}

TEST_CASE("agentic: every key has a default, and the spec round-trips", "[workload]") {
  const WorkloadSpec spec = test::spec_from_text(R"({"arrival": {"process": "poisson",
      "rate_per_s": 1}, "num_requests": 10, "lengths": {"distribution": "agentic"}})");
  const SessionSpec& s = spec.lengths.session;
  CHECK(s.system_prompt_tokens == 2000);
  CHECK(s.extra_turns == 1);
  CHECK(s.turns.mean_tokens == 7.8);
  CHECK(s.output.mean_tokens == 523);
  CHECK(s.gap.distribution == DurationKind::Lognormal);
  CHECK(parse_workload_spec(workload_spec_to_json(spec), "test.json", "/") == spec);
  const WorkloadSpec multi = test::spec_from_text(multi_turn_spec(
      R"({"process": "poisson", "rate_per_s": 1})",
      R"(, "think_time": {"distribution": "lognormal", "mean_s": 3, "std_s": 1, "max_s": 9})"));
  CHECK(parse_workload_spec(workload_spec_to_json(multi), "test.json", "/") == multi);
  CHECK(workload_spec_to_json(multi)["lengths"]["turns"] ==
        nlohmann::json::parse(R"({"distribution": "fixed", "count": 3})"));
  // The defaults run: a first turn holds the tool prompt and a task of at least 16 tokens.
  const auto served = run(R"({"arrival": {"process": "poisson", "rate_per_s": 1},
      "num_requests": 10, "lengths": {"distribution": "agentic"}})");
  REQUIRE(served.size() == 10);
  CHECK(served[0].request.prompt_tokens >= 2016);
  CHECK(served[0].content.front().tokens == 2000);
}

TEST_CASE("multi_turn and agentic: bad keys are refused naming the key", "[workload]") {
  const auto fails_with = [](const std::string& text, const std::string& expected) {
    INFO(text);
    CHECK_THROWS_WITH(test::spec_from_text(text), Contains("test.json") && Contains(expected));
  };
  const std::string poisson = R"({"process": "poisson", "rate_per_s": 1})";
  fails_with(R"({"arrival": {"process": "poisson", "rate_per_s": 1}, "num_requests": 5,
      "lengths": {"distribution": "multi_turn",
                  "user": {"distribution": "fixed", "tokens": 1},
                  "output": {"distribution": "fixed", "tokens": 1}}})",
             "lengths.turns");
  fails_with(multi_turn_spec(poisson, R"(, "max_total_tokens": 9)"),
             "\"lengths.max_total_tokens\": not used with distribution \"multi_turn\"");
  fails_with(multi_turn_spec(poisson, R"(, "tool_call": {"distribution": "fixed", "tokens": 1})"),
             "lengths.tool_call");
  fails_with(multi_turn_spec(poisson, R"(, "think_time": {"distribution": "gamma"})"),
             "valid values are fixed, uniform, exponential, lognormal");
  fails_with(multi_turn_spec(poisson, R"(, "think_time": {"distribution": "fixed",
                                           "seconds": -1})"),
             "lengths.think_time.seconds");
  fails_with(multi_turn_spec(poisson, R"(, "think_time": {"distribution": "uniform",
                                           "min_s": 3, "max_s": 1})"),
             "min_s exceeds max_s");
  fails_with(multi_turn_spec(poisson, R"(, "think_time": {"distribution": "exponential",
                                           "mean_s": 3, "std_s": 1})"),
             "lengths.think_time.std_s\": not used with distribution \"exponential\"");
  fails_with(multi_turn_spec(poisson, R"(, "system_prompt_tokens": -3)"),
             "lengths.system_prompt_tokens");
  fails_with(R"({"arrival": {"process": "poisson", "rate_per_s": 1}, "num_requests": 5,
      "lengths": {"distribution": "agentic", "steps": {"distribution": "fixed", "tokens": 2}}})",
             "lengths.steps.count");
  fails_with(R"({"arrival": {"process": "poisson", "rate_per_s": 1}, "num_requests": 5,
      "lengths": {"distribution": "agentic", "user": {"distribution": "fixed", "tokens": 2}}})",
             "lengths.user");
  fails_with(R"({"arrival": {"process": "poisson", "rate_per_s": 1},
      "lengths": {"distribution": "agentic"}})",
             "stop condition");
}
