#pragma once

#include "sim/cluster/router.h"

namespace servesim {

// Replicas in turn, regardless of load.
class RoundRobinRouter final : public IRouter {
 public:
  std::int32_t route(const RequestSpec&, std::span<const ReplicaView> replicas) override {
    const auto pick = static_cast<std::int32_t>(next_ % replicas.size());
    ++next_;
    return pick;
  }
  bool reads_views() const override { return false; }

 private:
  std::uint64_t next_ = 0;
};

}  // namespace servesim
