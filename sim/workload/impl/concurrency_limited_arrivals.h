#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "sim/workload/arrival_process.h"

namespace servesim {

// At most `limit` requests in flight over an open-loop process, as vllm bench serve's
// --max-concurrency: the inner process still draws its arrivals at its rate, in order, but
// the k-th is sent only when a slot is free, at max(its arrival, the time the slot freed),
// the first-come first-served order of vLLM's client-side semaphore. A request counts in
// flight from the moment next() returns it until on_request_done reports it finished or
// rejected. With a limit no arrival ever reaches, the times are the inner process's own.
class ConcurrencyLimitedArrivals final : public IArrivalProcess {
 public:
  ConcurrencyLimitedArrivals(std::unique_ptr<IArrivalProcess> inner, std::int64_t limit);
  std::optional<SimTime> next(Rng& rng) override;
  bool exhausted() const override { return inner_->exhausted(); }
  void on_request_done(SimTime now) override;

 private:
  std::unique_ptr<IArrivalProcess> inner_;
  std::int64_t limit_;
  std::int64_t in_flight_ = 0;
  // The latest time a slot freed: no request is sent before it once it has waited for one.
  SimTime slot_freed_;
};

}  // namespace servesim
