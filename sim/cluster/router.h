#pragma once

#include <cstdint>
#include <span>

#include "sim/workload/workload_source.h"

namespace servesim {

// What a router may know about a replica when a request arrives: its queues and its KV
// memory, as of the replica's last change (a decode run in bulk changes its KV memory
// without telling; see IRouter::reads_kv_memory), and for a router that reads prefixes the
// arriving request's prefix each replica's cache holds.
struct ReplicaView {
  std::int32_t replica = 0;
  std::int64_t outstanding_requests = 0;  // routed to it and not yet finished
  std::int64_t waiting_requests = 0;      // queued: new, or preempted by recompute
  std::int64_t running_requests = 0;      // holding KV memory
  std::int64_t swapped_requests = 0;      // KV in host memory
  std::int64_t waiting_tokens = 0;        // tokens the waiting requests would compute
  std::int64_t kv_capacity_tokens = 0;
  std::int64_t kv_used_tokens = 0;  // token states, reservations and fragmentation
  std::int64_t kv_free_tokens = 0;  // free for allocation (cached prefix blocks included)
  // The arriving request's leading tokens this replica's prefix cache holds now
  // (IKvCacheAllocator::cached_prefix_tokens); set only for a router that reads_prefixes().
  std::int64_t cached_prefix_tokens = 0;

  // Share of its KV slots in use.
  double kv_utilization() const {
    return static_cast<double>(kv_used_tokens) / static_cast<double>(kv_capacity_tokens);
  }
};

// Picks the replica for each arriving request. Returns an index into `replicas`.
class IRouter {
 public:
  virtual ~IRouter() = default;
  virtual std::int32_t route(const RequestSpec& request, std::span<const ReplicaView> replicas) = 0;
  // Whether route() reads the views at all; the cluster keeps them current only for a
  // router that does (they change at every launch and completion).
  virtual bool reads_views() const { return true; }
  // Whether route() reads the KV memory fields. They change with every decode iteration,
  // so under such a router replicas advance decode iterations one at a time (see
  // DecodeRuns).
  virtual bool reads_kv_memory() const { return false; }
  // Whether route() reads ReplicaView::cached_prefix_tokens, which the cluster then looks up
  // in every replica's allocator at each arrival of a request with content.
  virtual bool reads_prefixes() const { return false; }
};

}  // namespace servesim
