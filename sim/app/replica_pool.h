#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "sim/cluster/replica.h"
#include "sim/cluster/router.h"
#include "sim/config/run_config.h"
#include "sim/core/rng.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/model/model_spec.h"
#include "sim/speculative/speculation.h"

namespace servesim {

// One pool of identical replicas built from a run configuration: what they share (the cost
// model, the proposer of speculative decoding), the replicas, and the router that picks among
// them. An aggregated deployment is one pool; a disaggregated one has a prefill pool and a
// decode pool.
struct ReplicaPool {
  HardwareProfile hardware;
  std::unique_ptr<IExecutionTimeModel> time_model;
  std::unique_ptr<Speculation> speculation;  // declared before the replicas, which use it
  std::vector<std::unique_ptr<Replica>> replicas;
  std::unique_ptr<IRouter> router;
  std::int64_t max_len_tokens = 0;  // the length the engine serves with (start-up checks)
  // The allocator's capacity (whole blocks for paged allocation), per replica.
  std::int64_t allocator_capacity_tokens = 0;
  // What the GPUs holding one request's KV (TP x PP of one data-parallel rank: `kv_holders`)
  // hold of each of its tokens together, and the distinct pieces TP cuts a layer's KV into.
  double kv_bytes_per_token_held = 0;
  std::int64_t kv_holders = 0;
  std::int64_t kv_tensor_shards = 0;
  std::int64_t block_tokens = 0;  // the allocator's tokens per block
  std::int64_t gpus_per_replica = 0;
};

// Builds `config.replicas` replicas numbered from `first_replica`, which report to `observer`.
// Refuses what the engine would not start (InfeasibleError, exit 4) and bad configurations.
ReplicaPool build_replica_pool(const RunConfig& config, const ModelSpec& model,
                               const std::filesystem::path& data_root, const RngStreams& streams,
                               IServingObserver& observer, std::int32_t first_replica);

}  // namespace servesim
