#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/workload/arrival_process.h"

namespace servesim {

// A fixed population of users, each with at most one request outstanding: every user sends a
// request at t = 0, and when one finishes, its user thinks for think_time_s and sends the
// next. Load therefore adapts to the server's speed, as in a benchmark with N client threads.
class ClosedLoopArrivals final : public IArrivalProcess {
 public:
  ClosedLoopArrivals(std::int64_t users, double think_time_s);
  std::optional<SimTime> next(Rng& rng) override;
  bool exhausted() const override { return false; }
  // Releases the finished request's user at now + think time. Refuses more completions than
  // requests released: that would be a simulator bug, and would grow the population.
  void on_request_done(SimTime now) override;

 private:
  // Released but not yet returned arrivals, earliest first.
  std::priority_queue<SimTime, std::vector<SimTime>, std::greater<>> released_;
  std::int64_t outstanding_ = 0;  // returned by next() and not yet done
  SimTime think_time_;
};

}  // namespace servesim
