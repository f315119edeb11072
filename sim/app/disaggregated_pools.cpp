#include "sim/app/disaggregated_pools.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace servesim {

std::vector<std::int64_t> replica_nodes(const PoolPlacement& prefill, const PoolPlacement& decode) {
  std::vector<std::int64_t> nodes;
  std::int64_t node = 0;
  std::int64_t used = 0;  // GPUs taken in `node`
  const auto next_node = [&] {
    if (used > 0) ++node;
    used = 0;
  };
  for (const PoolPlacement* pool : {&prefill, &decode}) {
    if (pool == &decode && decode.hardware != prefill.hardware) next_node();
    const std::int64_t per_node = std::max<std::int64_t>(1, pool->gpus_per_node);
    const std::int64_t gpus = pool->gpus_per_replica;
    for (std::int64_t r = 0; r < pool->replicas; ++r) {
      if (gpus > per_node) {
        next_node();
        node += (gpus + per_node - 1) / per_node;
        nodes.push_back(-1);
        continue;
      }
      if (used + gpus > per_node) next_node();
      used += gpus;
      nodes.push_back(node);
    }
  }
  return nodes;
}

DisaggregatedPools disaggregated_pools(const RunConfig& config, ReplicaPool& prefill,
                                       ReplicaPool& decode, std::int64_t layers) {
  const DisaggregationConfig::KvTransfer& transfer = config.disaggregation->kv_transfer;
  const std::int64_t prefill_count = static_cast<std::int64_t>(prefill.replicas.size());
  const std::int64_t decode_count = static_cast<std::int64_t>(decode.replicas.size());
  const HardwareProfile& hw = prefill.hardware;
  KvHandoffOptions handoff;
  handoff.gpu_bytes_per_s[static_cast<std::size_t>(KvLinkKind::Nic)] = std::min(
      hw.inter_node_bandwidth_bytes_per_s, decode.hardware.inter_node_bandwidth_bytes_per_s);
  handoff.gpu_bytes_per_s[static_cast<std::size_t>(KvLinkKind::Nvlink)] =
      std::min(hw.gpu_link_bandwidth_bytes_per_s, decode.hardware.gpu_link_bandwidth_bytes_per_s);
  if (transfer.bandwidth_bytes_per_s) handoff.gpu_bytes_per_s.fill(*transfer.bandwidth_bytes_per_s);
  const auto placement = [](const ReplicaPool& pool, std::int64_t count) {
    return PoolPlacement{pool.hardware.name, static_cast<std::int64_t>(pool.hardware.gpus_per_node),
                         pool.gpus_per_replica, count};
  };
  const std::vector<std::int64_t> nodes =
      replica_nodes(placement(prefill, prefill_count), placement(decode, decode_count));
  for (std::int64_t p = 0; p < prefill_count; ++p) {
    for (std::int64_t d = 0; d < decode_count; ++d) {
      const std::int64_t a = nodes[static_cast<std::size_t>(p)];
      const std::int64_t b = nodes[static_cast<std::size_t>(prefill_count + d)];
      const bool nvlink =
          transfer.link == "nvlink" || (transfer.link == "auto" && a >= 0 && a == b);
      const KvLinkKind kind = nvlink ? KvLinkKind::Nvlink : KvLinkKind::Nic;
      if (!(handoff.gpu_bytes_per_s[static_cast<std::size_t>(kind)] > 0)) {
        throw InputError("disaggregation.kv_transfer",
                         std::string("the ") + (nvlink ? "nvlink" : "nic") + " link of " + hw.name +
                             " has no bandwidth in its profile; give "
                             "kv_transfer.bandwidth_bytes_per_s");
      }
      handoff.pair_links.push_back(kind);
    }
  }
  handoff.latency = SimTime::duration_from_seconds(transfer.latency_s.value_or(
      std::max(hw.inter_node_latency_s, decode.hardware.inter_node_latency_s)));
  // What lands: the decode side's GPUs holding a request's KV, each its share (replicated KV
  // heads and MLA's latent once per GPU that holds them), read from the prefill side's GPUs.
  handoff.bytes_per_token = decode.kv_bytes_per_token_held;
  handoff.prefill_gpus = prefill.gpus_per_replica;
  handoff.decode_gpus = decode.gpus_per_replica;
  handoff.prefill_holders = prefill.kv_holders;
  handoff.decode_holders = decode.kv_holders;
  handoff.prefill_replicas = static_cast<std::int32_t>(prefill_count);
  handoff.decode_replicas = static_cast<std::int32_t>(decode_count);
  handoff.block_overhead = SimTime::duration_from_seconds(transfer.block_overhead_s);
  handoff.block_tokens = decode.block_tokens;
  handoff.pieces_per_block =
      std::max<std::int64_t>(1, prefill.kv_tensor_shards / decode.kv_tensor_shards);
  handoff.layerwise = transfer.layerwise;
  handoff.layers = layers;
  DisaggregatedPools pools;
  pools.prefill_replicas = static_cast<std::int32_t>(prefill_count);
  pools.local_prefill_max_tokens = config.disaggregation->local_prefill_max_tokens;
  pools.order = parse_kv_handoff_order(transfer.handoff, "disaggregation.kv_transfer.handoff");
  pools.abort_timeout = SimTime::duration_from_seconds(transfer.abort_timeout_s);
  pools.decode_router = std::move(decode.router);
  pools.handoff = std::make_unique<KvHandoff>(std::move(handoff));
  return pools;
}

}  // namespace servesim
