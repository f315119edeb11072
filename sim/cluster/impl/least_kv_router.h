#pragma once

#include "sim/cluster/router.h"

namespace servesim {

// The replica using the smallest share of its KV cache; ties go to the fewest unfinished
// requests, then the lowest index.
class LeastKvRouter final : public IRouter {
 public:
  std::int32_t route(const RequestSpec&, std::span<const ReplicaView> replicas) override {
    std::size_t best = 0;
    for (std::size_t i = 1; i < replicas.size(); ++i) {
      const auto& a = replicas[i];
      const auto& b = replicas[best];
      if (a.kv_utilization() < b.kv_utilization() ||
          (a.kv_utilization() == b.kv_utilization() &&
           a.outstanding_requests < b.outstanding_requests)) {
        best = i;
      }
    }
    return static_cast<std::int32_t>(best);
  }
  bool reads_kv_memory() const override { return true; }
};

}  // namespace servesim
