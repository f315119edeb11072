#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/event_queue.h"

using namespace servesim;

TEST_CASE("events run by time, then phase, then insertion order", "[core]") {
  EventQueue<int> queue;
  queue.push(SimTime::from_ns(20), 0, 1);
  queue.push(SimTime::from_ns(10), 2, 2);
  queue.push(SimTime::from_ns(10), 1, 3);
  queue.push(SimTime::from_ns(10), 1, 4);
  queue.push(SimTime::from_ns(10), 0, 5);
  std::vector<int> order;
  while (!queue.empty())
    order.push_back(queue.pop().payload);
  REQUIRE(order == std::vector<int>{5, 3, 4, 2, 1});
  REQUIRE(queue.now() == SimTime::from_ns(20));
}

TEST_CASE("scheduling into the past is an invariant failure", "[core]") {
  EventQueue<int> queue;
  queue.push(SimTime::from_ns(100), 0, 1);
  (void)queue.pop();
  REQUIRE_THROWS_AS(queue.push(SimTime::from_ns(99), 0, 2), InvariantError);
  REQUIRE_NOTHROW(queue.push(SimTime::from_ns(100), 0, 3));
}

TEST_CASE("durations round up to whole nanoseconds and never to zero", "[core]") {
  REQUIRE(SimTime::duration_from_seconds(1e-12).ns() == 1);
  REQUIRE(SimTime::duration_from_seconds(1.5e-9).ns() == 2);
  REQUIRE(SimTime::duration_from_seconds(0).ns() == 0);
  REQUIRE(SimTime::from_seconds(2.5).ns() == 2500000000);
  REQUIRE(SimTime::from_ns(1500).seconds() == Approx(1.5e-6));
  // Whole nanoseconds stay whole; everything else rounds up, as std::ceil does.
  REQUIRE(SimTime::duration_from_seconds(3e-9).ns() ==
          static_cast<std::int64_t>(std::ceil(3e-9 * 1e9)));
  REQUIRE(SimTime::duration_from_seconds(2.0).ns() == 2000000000);
  std::mt19937_64 random(5);
  for (int i = 0; i < 100000; ++i) {
    const double seconds = std::ldexp(static_cast<double>(random() >> 11), -53) *
                           std::pow(10.0, static_cast<double>(random() % 12) - 6);
    const auto expected =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(seconds * 1e9)));
    REQUIRE(SimTime::duration_from_seconds(seconds).ns() == (seconds > 0 ? expected : 0));
  }
}

// The serving phase order (completions, arrivals, launches) is held by what a run does, in
// tests/cluster/event_phase_test.cpp.

TEST_CASE("a cancelled event is never popped, and the others keep their order", "[core][cancel]") {
  EventQueue<int> queue;
  const auto a = queue.push(SimTime::from_ns(10), 0, 1);
  queue.push(SimTime::from_ns(10), 0, 2);
  const auto c = queue.push(SimTime::from_ns(10), 0, 3);
  queue.push(SimTime::from_ns(10), 1, 4);
  queue.push(SimTime::from_ns(10), 0, 5);
  queue.push(SimTime::from_ns(5), 0, 6);
  queue.cancel(c);
  queue.cancel(a);
  CHECK(queue.size() == 4);
  std::vector<int> order;
  while (!queue.empty())
    order.push_back(queue.pop().payload);
  CHECK(order == std::vector<int>{6, 2, 5, 4});
  CHECK(queue.size() == 0);
}

TEST_CASE("a cancelled event does not move the clock", "[core][cancel]") {
  EventQueue<int> queue;
  queue.push(SimTime::from_ns(10), 0, 1);
  const auto later = queue.push(SimTime::from_ns(20), 0, 2);
  queue.cancel(later);
  CHECK(queue.size() == 1);
  CHECK_FALSE(queue.empty());
  CHECK(queue.pop().payload == 1);
  // Only the cancelled event is left in the heap: the queue reads empty at the last real time.
  CHECK(queue.empty());
  CHECK(queue.size() == 0);
  CHECK(queue.now() == SimTime::from_ns(10));
  // So an event before the cancelled one's time may still come, and the cancelled one is
  // skipped on the way to a later one.
  queue.push(SimTime::from_ns(15), 0, 3);
  queue.push(SimTime::from_ns(25), 0, 4);
  CHECK(queue.size() == 2);
  CHECK(queue.pop().payload == 3);
  CHECK(queue.now() == SimTime::from_ns(15));
  CHECK(queue.pop().payload == 4);
  CHECK(queue.now() == SimTime::from_ns(25));
  CHECK(queue.empty());
}

TEST_CASE("an event cancelled and pushed again runs once, at its new time", "[core][cancel]") {
  // What Cluster does with a decode run cut short.
  EventQueue<int> queue;
  const auto run_end = queue.push(SimTime::from_ns(100), 0, 7);
  queue.push(SimTime::from_ns(40), 1, 8);
  CHECK(queue.pop().payload == 8);
  queue.cancel(run_end);
  queue.push(SimTime::from_ns(60), 0, 7);
  const auto event = queue.pop();
  CHECK(event.payload == 7);
  CHECK(event.time == SimTime::from_ns(60));
  CHECK(queue.empty());
}

TEST_CASE("cancelling twice, an unknown event or a past one is an invariant failure",
          "[core][cancel]") {
  EventQueue<int> queue;
  const auto first = queue.push(SimTime::from_ns(10), 0, 1);
  const auto second = queue.push(SimTime::from_ns(20), 0, 2);
  queue.cancel(second);
  CHECK_THROWS_AS(queue.cancel(second), InvariantError);
  CHECK_THROWS_AS(queue.cancel({SimTime::from_ns(20), second.sequence + 1}), InvariantError);
  CHECK(queue.pop().payload == 1);
  queue.push(SimTime::from_ns(30), 0, 3);
  CHECK(queue.pop().payload == 3);
  CHECK_THROWS_AS(queue.cancel(first), InvariantError);  // popped, before the clock
  CHECK(queue.empty());
}
