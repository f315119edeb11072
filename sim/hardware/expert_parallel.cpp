#include "sim/hardware/expert_parallel.h"

#include <algorithm>

namespace servesim {

AllToAllCost expert_parallel_all_to_all(const HardwareProfile& hardware,
                                        const ExpertParallelShape& shape) noexcept {
  AllToAllCost c;
  const double e = std::max(shape.degree, 1.0);
  if (e <= 1) return c;
  const double node = hardware.gpus_per_node > 0 ? std::min(hardware.gpus_per_node, e) : e;
  const double copies = shape.tokens * shape.experts_per_token * shape.load_imbalance *
                        shape.hidden * shape.activation_bytes;
  c.intra_node_bytes = copies * (node - 1) / e;
  c.inter_node_bytes = copies * (e - node) / e;
  const double efficiency = hardware.efficiency.gpu_link;
  const double intra_s =
      c.intra_node_bytes / (hardware.gpu_link_bandwidth_bytes_per_s * efficiency);
  double one_s = hardware.overheads.collective_latency_s + intra_s;
  if (c.inter_node_bytes > 0) {
    const double inter_s =
        c.inter_node_bytes / (hardware.inter_node_bandwidth_bytes_per_s * efficiency);
    one_s = std::max(hardware.overheads.collective_latency_s, hardware.inter_node_latency_s) +
            std::max(intra_s, inter_s);
  }
  c.time_s = 2 * one_s;
  return c;
}

}  // namespace servesim
