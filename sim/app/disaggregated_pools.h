#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/app/replica_pool.h"
#include "sim/cluster/cluster.h"
#include "sim/config/run_config.h"

namespace servesim {

// A pool of replicas as placement sees it.
struct PoolPlacement {
  std::string hardware;
  std::int64_t gpus_per_node = 0;
  std::int64_t gpus_per_replica = 1;
  std::int64_t replicas = 0;
};

// Where the replicas of a disaggregated deployment sit: in nodes of gpus_per_node GPUs,
// prefill replicas first and decode replicas after them, each in the node being filled when it
// has room for the replica whole, else in the next (a fresh node when the decode hardware
// differs). Returns each replica's node,
// prefill replicas first; -1 for a replica of more GPUs than a node, which spans nodes of its
// own.
std::vector<std::int64_t> replica_nodes(const PoolPlacement& prefill, const PoolPlacement& decode);

// The disaggregated deployment's pools, in one cluster: prefill replicas first. The KV link
// of each pair of replicas (kv_transfer.link; "auto": NVLink between replicas of one node,
// else each GPU's NIC), per GPU and direction from both pools' hardware, the lesser of the two.
DisaggregatedPools disaggregated_pools(const RunConfig& config, ReplicaPool& prefill,
                                       ReplicaPool& decode, std::int64_t layers);

}  // namespace servesim
