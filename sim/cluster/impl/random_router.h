#pragma once

#include "sim/cluster/router.h"
#include "sim/core/rng.h"

namespace servesim {

// A uniformly random replica from the run's "router" stream.
class RandomRouter final : public IRouter {
 public:
  explicit RandomRouter(Rng rng) : rng_(rng) {}
  std::int32_t route(const RequestSpec&, std::span<const ReplicaView> replicas) override {
    return static_cast<std::int32_t>(
        rng_.uniform_int(0, static_cast<std::int64_t>(replicas.size()) - 1));
  }
  bool reads_views() const override { return false; }

 private:
  Rng rng_;
};

}  // namespace servesim
