#pragma once

#include "sim/hardware/hardware_profile.h"

namespace servesim {

// One MoE layer's expert-parallel exchange on one GPU of an EP group: each of its `tokens`
// sends its hidden state to the GPUs holding its `experts_per_token` experts (dispatch) and
// gets the weighted outputs back (combine). Routing is uniform over the group's `degree`
// GPUs, so a GPU keeps 1 / degree of the copies, sends (g - 1) / degree of them within its
// node (g = GPUs of the group in a node: min(degree, gpus_per_node)) and (degree - g) /
// degree over the inter-node link. `load_imbalance` >= 1 scales the busiest GPU's share.
struct ExpertParallelShape {
  double tokens = 0;  // tokens on this GPU (its data-parallel attention share)
  double hidden = 0;
  double activation_bytes = 2;
  double experts_per_token = 1;
  double degree = 1;
  double load_imbalance = 1;
};

struct AllToAllCost {
  double intra_node_bytes = 0;  // one all-to-all, sent by this GPU over the GPU link
  double inter_node_bytes = 0;  // one all-to-all, sent by this GPU over its NIC
  double time_s = 0;            // dispatch plus combine: two all-to-alls
};

// Each all-to-all takes the latency of the slowest link it uses plus the longer of its two
// transfers (the GPU link and the NIC run at once), at the gpu_link efficiency.
AllToAllCost expert_parallel_all_to_all(const HardwareProfile& hardware,
                                        const ExpertParallelShape& shape) noexcept;

}  // namespace servesim
