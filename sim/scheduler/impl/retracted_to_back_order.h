#pragma once

#include <cstdint>
#include <unordered_map>

#include "sim/scheduler/queue_order.h"

namespace servesim {

// SGLang's waiting queue: arrival order, except that a request retracted from the decode
// batch goes to the back (Scheduler._extend_requests_to_queue appends it), behind every
// request that has reached the replica so far and ahead of later arrivals. A strict order
// at every instant: a request's key changes only while it is in no queue.
class RetractedToBack final : public IQueueOrder {
 public:
  bool before(const Request& a, const Request& b) const override { return key(a) < key(b); }
  // `request` is about to be retracted; `last_arrival` is the highest id queued so far.
  void send_to_back(const Request& request, std::int64_t last_arrival) {
    tickets_[request.spec.id] = {last_arrival, next_ticket_++};
  }
  void forget(const Request& request) { tickets_.erase(request.spec.id); }

 private:
  struct Key {
    std::int64_t after = 0;    // the last arrival it queues behind (its own id if never retracted)
    std::int64_t ticket = -1;  // retractions in order; -1: never retracted
    auto operator<=>(const Key&) const = default;
  };
  // A request preempted other than by retraction keeps its place by arrival.
  Key key(const Request& r) const {
    if (r.preemptions == 0) return {r.spec.id, -1};
    const auto it = tickets_.find(r.spec.id);
    return it == tickets_.end() ? Key{r.spec.id, -1} : it->second;
  }
  std::unordered_map<std::int64_t, Key> tickets_;
  std::int64_t next_ticket_ = 0;
};

}  // namespace servesim
