#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/cluster/cluster.h"
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

TEST_CASE("the serving phase order is pinned: completions, arrivals, launches", "[core]") {
  // A launch must see the memory a batch freed and the requests that arrived at its instant.
  REQUIRE(static_cast<int>(EventPhase::BatchDone) < static_cast<int>(EventPhase::Arrival));
  REQUIRE(static_cast<int>(EventPhase::Arrival) < static_cast<int>(EventPhase::Launch));
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
