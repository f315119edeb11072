#include <catch2/catch.hpp>

#include <cmath>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/scheduler/request_lifecycle.h"
#include "sim/scheduler/verification_planning.h"
#include "sim/speculative/acceptance_model.h"
#include "sim/speculative/speculative_config.h"

using namespace servesim;

// 100,000 steps: the standard error of the mean is then at most 0.2% for these rates (over
// 10,000 it reaches 0.6% at a = 0.5, k = 5; the run test holds 10,000 steps within 1%).
TEST_CASE("tokens per step match (1 - a^(k+1)) / (1 - a) within 1%", "[speculative]") {
  for (const double a : {0.5, 0.7, 0.9}) {
    for (const std::int64_t k : {1, 3, 5}) {
      AcceptanceModel model({a}, RngStreams(7).stream("speculative_acceptance"));
      std::int64_t emitted = 0;
      constexpr std::int64_t kSteps = 100000;
      for (std::int64_t i = 0; i < kSteps; ++i)
        emitted += model.draw(k) + 1;
      const double expected = (1 - std::pow(a, static_cast<double>(k + 1))) / (1 - a);
      INFO("a " << a << " k " << k);
      CHECK(model.expected_tokens_per_step(k) == Approx(expected).epsilon(1e-12));
      CHECK(static_cast<double>(emitted) / kSteps == Approx(expected).epsilon(0.01));
    }
  }
}

TEST_CASE("acceptance by position: each draft is checked only when all before it passed",
          "[speculative]") {
  AcceptanceModel model({0.9, 0.5, 0.0}, RngStreams(1).stream("speculative_acceptance"));
  // 1 + 0.9 + 0.9 * 0.5, and the third draft (rate 0) and later ones never pass.
  CHECK(model.expected_tokens_per_step(5) == Approx(1 + 0.9 + 0.45));
  for (int i = 0; i < 1000; ++i)
    CHECK(model.draw(5) <= 2);
  CHECK(model.draw(0) == 0);
}

TEST_CASE("a speculative step keeps the accepted drafts and leaves the rejected slots",
          "[speculative]") {
  Request r;
  r.spec.id = 3;
  r.spec.prompt_tokens = 100;
  r.spec.output_tokens = 50;
  admit(r);
  complete_step(r, 100, SimTime::from_seconds(1));  // prefill: the first token
  REQUIRE(r.uncomputed_tokens() == 1);
  complete_speculative_step(r, 4, 1, SimTime::from_seconds(2));
  CHECK(r.generated_tokens == 3);  // one accepted draft and the bonus token
  CHECK(r.computed_tokens == 102);
  CHECK(r.uncomputed_tokens() == 1);
  CHECK(r.lookahead_slots == 3);  // 5 slots written, 2 kept
  // A shorter step next fits in the slots left: none to grow, and fewer are left after it.
  CHECK(drafts_for(r, 1, 100) == 1);
  complete_speculative_step(r, 1, 0, SimTime::from_seconds(3));
  CHECK(r.lookahead_slots == 2);
  CHECK_THROWS_AS(complete_speculative_step(r, 2, 3, SimTime::from_seconds(4)), InvariantError);
  preempt_by_recompute(r);
  CHECK(r.lookahead_slots == 0);
}

TEST_CASE("drafts shrink near the output end and to the budget left", "[speculative]") {
  Request r;
  r.spec.prompt_tokens = 10;
  r.spec.output_tokens = 5;
  r.generated_tokens = 3;  // two to go: one draft at most
  CHECK(drafts_for(r, 4, 100) == 1);
  r.generated_tokens = 4;
  CHECK(drafts_for(r, 4, 100) == 0);
  r.generated_tokens = 0;
  CHECK(drafts_for(r, 4, 3) == 2);
  CHECK(drafts_for(r, 4, 1) == 0);
}

TEST_CASE("the speculative section reads vLLM's keys and refuses bad ones", "[speculative]") {
  const auto read = [](const char* text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    JsonObjectReader r(j, "config.json", "speculative");
    return read_speculative_config(r);
  };
  const SpeculativeConfig c = read(
      R"({"method": "deepseek_mtp", "num_speculative_tokens": 2, "acceptance_rate": [0.8, 0.6]})");
  CHECK(c.method == SpeculativeMethod::Mtp);
  CHECK(c.acceptance_rate == std::vector<double>{0.8, 0.6});
  CHECK(read(R"({"model": "llama-3-8b", "num_speculative_tokens": 1, "acceptance_rate": 0.5})")
            .method == SpeculativeMethod::DraftModel);
  const auto error_of = [&](const char* text) {
    try {
      read(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using Catch::Matchers::Contains;
  CHECK_THAT(
      error_of(R"({"method": "ngram", "num_speculative_tokens": 0, "acceptance_rate": 0.5})"),
      Contains("speculative.num_speculative_tokens"));
  CHECK_THAT(error_of(R"({"method": "ngram", "num_speculative_tokens": 2, "acceptance_rate": 1})"),
             Contains("[0, 1)"));
  CHECK_THAT(
      error_of(
          R"({"method": "ngram", "num_speculative_tokens": 2, "acceptance_rate": [0.5, -0.1]})"),
      Contains("speculative.acceptance_rate"));
  CHECK_THAT(
      error_of(R"({"method": "draft_model", "num_speculative_tokens": 2, "acceptance_rate": 0.5})"),
      Contains("speculative.model"));
  CHECK_THAT(
      error_of(R"({"method": "medusa", "num_speculative_tokens": 2, "acceptance_rate": 0.5})"),
      Contains("unknown method"));
  CHECK_THAT(error_of(R"({"method": "ngram", "num_speculative_tokens": 2})"),
             Contains("acceptance_rate"));
  CHECK(acceptance_rate_from_text("0.8,0.6", "--acceptance-rate") == nlohmann::json({0.8, 0.6}));
  CHECK(acceptance_rate_from_text("0.7", "--acceptance-rate") == nlohmann::json(0.7));
  CHECK_THROWS_AS(acceptance_rate_from_text("0.7,", "--acceptance-rate"), InputError);
}
