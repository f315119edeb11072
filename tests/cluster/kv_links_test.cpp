// The KV links of disaggregation: closed forms for one transfer, for transfers sharing a port,
// and for a transfer whose share changes when another ends.
#include <cstdint>

#include <catch2/catch.hpp>

#include "sim/cluster/kv_links.h"
#include "sim/core/error.h"

namespace {

using servesim::KvLinks;
using servesim::SimTime;

constexpr double kGBps = 1e9;

SimTime seconds(double s) {
  return SimTime::from_seconds(s);
}

// A transfer of `bytes` from sender port `from` to receiver port `to`, with no ceiling and
// no fixed time.
KvLinks::Leg leg(std::int32_t from, std::int32_t to, double bytes) {
  KvLinks::Leg result;
  result.from = from;
  result.to = to;
  result.bytes = bytes;
  return result;
}

// Within 2 ns of `s` seconds: shares are computed in floating point and rounded up to ns.
bool near(SimTime t, double s) {
  const std::int64_t diff = t.ns() - seconds(s).ns();
  return diff >= -2 && diff <= 2;
}

TEST_CASE("one transfer alone takes its bytes over the bandwidth, plus the latency", "[cluster]") {
  KvLinks links({50 * kGBps}, {50 * kGBps});
  const auto changes = links.start(7, {0, 0, 100e6, 0, seconds(5e-6)}, SimTime{});
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].transfer == 7);
  CHECK(near(changes[0].done_at, 100e6 / (50 * kGBps) + 5e-6));  // 2 ms + 5 us
  CHECK(links.in_flight() == 1);
  CHECK(links.finish(7, changes[0].done_at).empty());
  CHECK(links.in_flight() == 0);
}

TEST_CASE("two transfers that start together on one port each take twice as long", "[cluster]") {
  // Two receivers, one sender: the sender's port is the one shared.
  KvLinks links({10 * kGBps}, {10 * kGBps, 10 * kGBps});
  CHECK(near(links.start(0, leg(0, 0, 1e9), SimTime{}).at(0).done_at, 0.1));
  const auto both = links.start(1, leg(0, 1, 1e9), SimTime{});
  REQUIRE(both.size() == 2);
  CHECK(near(both[0].done_at, 0.2));
  CHECK(near(both[1].done_at, 0.2));
  // Two senders into one receiver share the receiver's port the same way.
  KvLinks into_one({10 * kGBps, 10 * kGBps}, {10 * kGBps});
  (void)into_one.start(0, leg(0, 0, 1e9), SimTime{});
  CHECK(near(into_one.start(1, leg(1, 0, 1e9), SimTime{}).at(1).done_at, 0.2));
  // Transfers on ports of their own do not slow each other.
  KvLinks apart({10 * kGBps, 10 * kGBps}, {10 * kGBps, 10 * kGBps});
  (void)apart.start(0, leg(0, 0, 1e9), SimTime{});
  const auto own = apart.start(1, leg(1, 1, 1e9), SimTime{});
  REQUIRE(own.size() == 1);
  CHECK(near(own[0].done_at, 0.1));
}

TEST_CASE("a transfer speeds up when the one sharing its port ends", "[cluster]") {
  KvLinks links({10 * kGBps}, {10 * kGBps});
  (void)links.start(0, leg(0, 0, 2e9), SimTime{});  // alone: 0.2 s
  // At 0.1 s (1 GB left) a 0.5 GB transfer joins: both at 5 GB/s. The short one ends at
  // 0.2 s, when the long one has 0.5 GB left, which it moves alone by 0.25 s.
  const auto joined = links.start(1, leg(0, 0, 0.5e9), seconds(0.1));
  REQUIRE(joined.size() == 2);
  CHECK(near(joined[0].done_at, 0.3));
  CHECK(near(joined[1].done_at, 0.2));
  const auto after = links.finish(1, seconds(0.2));
  REQUIRE(after.size() == 1);
  CHECK(after[0].transfer == 0);
  CHECK(near(after[0].done_at, 0.25));
}

TEST_CASE("a transfer moves at most at its own ceiling, and ends its fixed time late",
          "[cluster]") {
  // Ports of 40 GB/s; each transfer's KV on GPUs whose links give it 15 GB/s at most.
  KvLinks links({40 * kGBps}, {40 * kGBps});
  CHECK(near(links.start(0, {0, 0, 1.5e9, 15 * kGBps, seconds(0.01)}, SimTime{}).at(0).done_at,
             0.11));
  // A second one: both below their even share (20 GB/s), so neither slows.
  const auto both = links.start(1, {0, 0, 1.5e9, 15 * kGBps, SimTime{}}, SimTime{});
  REQUIRE(both.size() == 1);
  CHECK(near(both[0].done_at, 0.1));
  // A third: the share (40/3 GB/s) is below the ceiling, and binds all three.
  const auto three = links.start(2, {0, 0, 1.5e9, 15 * kGBps, SimTime{}}, SimTime{});
  REQUIRE(three.size() == 3);
  CHECK(near(three[2].done_at, 1.5e9 / (40 * kGBps / 3)));
}

TEST_CASE("a link of no bandwidth carries nothing", "[cluster]") {
  CHECK_THROWS_AS(KvLinks({-1.0}, {10 * kGBps}), servesim::InputError);
  KvLinks idle({0.0}, {10 * kGBps});
  CHECK_THROWS_AS(idle.start(0, leg(0, 0, 1.0), SimTime{}), servesim::InvariantError);
  KvLinks links({10 * kGBps}, {10 * kGBps});
  CHECK_THROWS_AS(links.finish(3, SimTime{}), servesim::InvariantError);
  CHECK_THROWS_AS(links.start(0, leg(1, 0, 1.0), SimTime{}), servesim::InvariantError);
}

}  // namespace
