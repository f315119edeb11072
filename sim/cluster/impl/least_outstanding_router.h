#pragma once

#include "sim/cluster/router.h"

namespace servesim {

// The replica with the fewest unfinished requests; ties go to the lowest index.
class LeastOutstandingRouter final : public IRouter {
 public:
  std::int32_t route(const RequestSpec&, std::span<const ReplicaView> replicas) override {
    std::size_t best = 0;
    for (std::size_t i = 1; i < replicas.size(); ++i) {
      if (replicas[i].outstanding_requests < replicas[best].outstanding_requests) best = i;
    }
    return static_cast<std::int32_t>(best);
  }
};

}  // namespace servesim
