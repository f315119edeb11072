#include "sim/workload/impl/closed_loop_arrivals.h"

#include "sim/core/error.h"

namespace servesim {

ClosedLoopArrivals::ClosedLoopArrivals(std::int64_t users, double think_time_s)
    : think_time_(SimTime::from_seconds(think_time_s)) {
  for (std::int64_t user = 0; user < users; ++user)
    released_.push(SimTime());
}

std::optional<SimTime> ClosedLoopArrivals::next(Rng& /*rng*/) {
  if (released_.empty()) return std::nullopt;
  const SimTime arrival = released_.top();
  released_.pop();
  ++outstanding_;
  return arrival;
}

void ClosedLoopArrivals::on_request_done(SimTime now) {
  if (outstanding_ == 0) {
    throw InvariantError("closed-loop workload: a request finished that was never released");
  }
  --outstanding_;
  released_.push(now + think_time_);
}

}  // namespace servesim
