#pragma once

#include <cstdint>
#include <span>

#include "sim/workload/workload_source.h"

namespace servesim {

// What a router may know about a replica when a request arrives.
struct ReplicaLoad {
  std::int32_t replica = 0;
  std::int64_t outstanding_requests = 0;  // routed to it and not yet finished
  double kv_utilization = 0;              // share of its KV slots in use
};

// Picks the replica for each arriving request. Returns an index into `replicas`.
class IRouter {
 public:
  virtual ~IRouter() = default;
  virtual std::int32_t route(const RequestSpec& request, std::span<const ReplicaLoad> replicas) = 0;
  // Whether route() reads kv_utilization. That share changes with every decode iteration, so
  // under such a router replicas advance decode iterations one at a time (see Replica).
  virtual bool reads_kv_utilization() const { return false; }
};

}  // namespace servesim
