#include "sim/workload/impl/concurrency_limited_arrivals.h"

#include <algorithm>

#include "sim/core/error.h"

namespace servesim {

ConcurrencyLimitedArrivals::ConcurrencyLimitedArrivals(std::unique_ptr<IArrivalProcess> inner,
                                                       std::int64_t limit)
    : inner_(std::move(inner)), limit_(limit) {
  if (limit_ < 1) throw InvariantError("concurrency limit below 1");
}

std::optional<SimTime> ConcurrencyLimitedArrivals::next(Rng& rng) {
  if (in_flight_ >= limit_) return std::nullopt;
  const std::optional<SimTime> arrival = inner_->next(rng);
  if (!arrival) return std::nullopt;
  ++in_flight_;
  // Slots free in time order and requests take them in arrival order, so a request that
  // arrived while every slot was taken is sent when the last slot it waited for freed.
  return std::max(*arrival, slot_freed_);
}

void ConcurrencyLimitedArrivals::on_request_done(SimTime now) {
  if (in_flight_ == 0) {
    throw InvariantError("concurrency limit: a request finished that was never released");
  }
  --in_flight_;
  slot_freed_ = std::max(slot_freed_, now);
  inner_->on_request_done(now);
}

}  // namespace servesim
