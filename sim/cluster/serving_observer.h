#pragma once

#include <cstdint>
#include <string>

#include "sim/core/sim_time.h"
#include "sim/metrics/records.h"
#include "sim/scheduler/request.h"

namespace servesim {

// The signals a serving run emits; metrics and closed-loop workloads listen to them.
// Iterations and token gaps of one replica arrive in simulated-time order; those of different
// replicas may interleave in any order (a replica advancing decode iterations in bulk reports
// them together), so a listener that needs a canonical order keeps them per replica.
class IServingObserver {
 public:
  virtual ~IServingObserver() = default;
  virtual void on_iteration(const IterationRecord& iteration) = 0;
  // `count` inter-token gaps of `gap_s` seconds each, on replica `replica`.
  virtual void on_token_gaps(std::int32_t replica, double gap_s, std::int64_t count) = 0;
  virtual void on_request_finished(const Request& request, SimTime now) = 0;
  virtual void on_request_rejected(const RequestSpec& request, const std::string& reason,
                                   SimTime now) = 0;
};

}  // namespace servesim
