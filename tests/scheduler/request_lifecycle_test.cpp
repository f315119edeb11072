// The request update rule (request_lifecycle.h): computed tokens catch up with tokens(), a
// step that reaches the end samples one token, and every state change keeps the counters
// that rule reads consistent.
#include <catch2/catch.hpp>

#include <limits>

#include "sim/core/error.h"
#include "sim/scheduler/request_lifecycle.h"
#include "tests/support/requests.h"

using namespace servesim;
using test::request_of;

namespace {

SimTime at_ns(std::int64_t ns) {
  return SimTime::from_ns(ns);
}

}  // namespace

TEST_CASE("lifecycle: a whole prompt in one step samples one token", "[scheduler][lifecycle]") {
  Request r = request_of(0, 100, 5);
  admit(r);
  CHECK(r.state == RequestState::Running);
  CHECK(r.computed_tokens == 0);
  CHECK(r.prefill_end_tokens == 100);
  CHECK(r.prefilling());
  CHECK(r.uncomputed_tokens() == 100);

  r.in_flight = true;
  CHECK(complete_step(r, 100, at_ns(10)));
  CHECK_FALSE(r.in_flight);
  CHECK(r.generated_tokens == 1);
  CHECK(r.computed_tokens == 100);
  CHECK(r.tokens() == 101);
  CHECK(r.uncomputed_tokens() == 1);  // the sampled token, which the next step feeds back
  CHECK_FALSE(r.prefilling());
  CHECK(r.first_token == at_ns(10));
  CHECK(r.last_token == at_ns(10));
}

TEST_CASE("lifecycle: a chunked prompt samples only at its last chunk", "[scheduler][lifecycle]") {
  Request r = request_of(0, 100, 5);
  admit(r);
  CHECK_FALSE(complete_step(r, 40, at_ns(10)));
  CHECK_FALSE(complete_step(r, 40, at_ns(20)));
  CHECK(r.generated_tokens == 0);
  CHECK(r.computed_tokens == 80);
  CHECK(r.prefilling());
  CHECK(r.first_token == SimTime{});
  CHECK(r.last_token == SimTime{});
  CHECK(complete_step(r, 20, at_ns(30)));
  CHECK(r.generated_tokens == 1);
  CHECK(r.first_token == at_ns(30));
  CHECK(r.last_token == at_ns(30));
}

TEST_CASE("lifecycle: a decode step samples a token and stamps only the last token",
          "[scheduler][lifecycle]") {
  Request r = request_of(0, 10, 3);
  admit(r);
  REQUIRE(complete_step(r, 10, at_ns(10)));
  CHECK(complete_step(r, 1, at_ns(25)));
  CHECK(r.generated_tokens == 2);
  CHECK(r.computed_tokens == 11);
  CHECK(r.first_token == at_ns(10));
  CHECK(r.last_token == at_ns(25));
  CHECK_FALSE(r.finished());
  CHECK(complete_step(r, 1, at_ns(40)));
  CHECK(r.finished());
  CHECK(r.output_tokens_left() == 0);
  finish(r);
  CHECK(r.state == RequestState::Finished);
}

TEST_CASE("lifecycle: complete_decode_steps equals that many decode steps",
          "[scheduler][lifecycle]") {
  Request bulk = request_of(0, 10, 8);
  admit(bulk);
  REQUIRE(complete_step(bulk, 10, at_ns(10)));
  Request one_by_one = bulk;

  complete_decode_steps(bulk, 4, at_ns(50));
  for (std::int64_t k = 1; k <= 4; ++k)
    REQUIRE(complete_step(one_by_one, 1, at_ns(10 + 10 * k)));

  CHECK(bulk.computed_tokens == one_by_one.computed_tokens);
  CHECK(bulk.generated_tokens == one_by_one.generated_tokens);
  CHECK(bulk.generated_tokens == 5);
  CHECK(bulk.last_token == one_by_one.last_token);
  CHECK(bulk.first_token == at_ns(10));
  CHECK(bulk.uncomputed_tokens() == 1);
}

TEST_CASE("lifecycle: preemption by recompute resets progress and counts a preemption",
          "[scheduler][lifecycle]") {
  Request r = request_of(0, 10, 8);
  admit(r);
  REQUIRE(complete_step(r, 10, at_ns(10)));
  REQUIRE(complete_step(r, 1, at_ns(20)));  // 2 generated, 12 tokens, 11 computed

  preempt_by_recompute(r);
  CHECK(r.state == RequestState::Preempted);
  CHECK(r.computed_tokens == 0);
  CHECK(r.generated_tokens == 2);
  CHECK(r.preemptions == 1);
  CHECK_FALSE(r.prefilling());  // holds no memory and computes nothing until re-admitted
  CHECK(r.uncomputed_tokens() == 12);

  // Re-admitted, it prefills its prompt and generated tokens, then samples its third token.
  admit(r);
  CHECK(r.prefill_end_tokens == 12);
  CHECK(r.prefilling());
  CHECK(complete_step(r, 12, at_ns(50)));
  CHECK(r.generated_tokens == 3);
  CHECK(r.first_token == at_ns(10));
  CHECK(r.last_token == at_ns(50));
  CHECK_FALSE(r.prefilling());
}

TEST_CASE("lifecycle: a swap keeps the computed tokens", "[scheduler][lifecycle]") {
  Request r = request_of(0, 10, 8);
  admit(r);
  REQUIRE(complete_step(r, 10, at_ns(10)));
  REQUIRE(complete_step(r, 1, at_ns(20)));

  preempt_by_swap(r);
  CHECK(r.state == RequestState::Swapped);
  CHECK(r.computed_tokens == 11);
  CHECK(r.preemptions == 1);
  resume_from_swap(r);
  CHECK(r.state == RequestState::Running);
  CHECK(r.computed_tokens == 11);
  CHECK_FALSE(r.prefilling());  // it decodes on: no prefill to redo
  CHECK(complete_step(r, 1, at_ns(30)));
  CHECK(r.generated_tokens == 3);
}

TEST_CASE("lifecycle: admission with cached tokens starts the prefill there",
          "[scheduler][lifecycle]") {
  Request r = request_of(0, 100, 5);
  admit(r, 64);
  CHECK(r.computed_tokens == 64);
  CHECK(r.prefill_end_tokens == 100);
  CHECK(r.prefilling());
  CHECK(r.uncomputed_tokens() == 36);
  CHECK(complete_step(r, 36, at_ns(10)));
  CHECK(r.generated_tokens == 1);
  CHECK(r.first_token == at_ns(10));
}

TEST_CASE("lifecycle: scheduling stamps the first batch only, and rejection",
          "[scheduler][lifecycle]") {
  Request r = request_of(0, 10, 2);
  CHECK_FALSE(r.scheduled);
  schedule(r, at_ns(5));
  schedule(r, at_ns(9));
  CHECK(r.scheduled);
  CHECK(r.first_scheduled == at_ns(5));

  Request never = request_of(1, 10, 2);
  reject(never);
  CHECK(never.state == RequestState::Rejected);
}

TEST_CASE("lifecycle: admitting more than 2^31 tokens is an invariant failure",
          "[scheduler][lifecycle]") {
  Request r = request_of(0, std::int64_t{std::numeric_limits<std::int32_t>::max()} + 1, 1);
  CHECK_THROWS_AS(admit(r), InvariantError);
}
