#pragma once

#include "sim/scheduler/request.h"

namespace servesim {

// The order a scheduler serves its queues in: admission takes waiting requests in this order,
// the running list is kept in it, and preemption picks its victims from the end of it (the
// request served last). First come, first served now; a priority order later.
class IQueueOrder {
 public:
  virtual ~IQueueOrder() = default;
  // Whether `a` is served before `b`. A strict weak order that never changes for a pair.
  virtual bool before(const Request& a, const Request& b) const = 0;
};

// Arrival order (request ids are given in arrival order).
class FirstComeFirstServed final : public IQueueOrder {
 public:
  bool before(const Request& a, const Request& b) const override { return a.spec.id < b.spec.id; }
};

}  // namespace servesim
