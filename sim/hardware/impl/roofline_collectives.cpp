// Communication: the TP all-reduces (one level within a node, two across nodes), the PP
// send and expert parallelism's dispatch and combine.
#include <cmath>

#include "sim/hardware/expert_parallel.h"
#include "sim/hardware/impl/roofline_model.h"

namespace servesim {

void RooflineModel::price_collective(OperatorCost& op, double calls, double bytes_per_rank,
                                     double ring_factor, double latency_s,
                                     double link_bytes_per_s) const noexcept {
  op.bytes = calls * ring_factor * bytes_per_rank;
  op.time_s = calls * latency_s + op.bytes / link_bytes_per_s;
  op.bound = Bound::Network;
}

// Within a node, a ring: 2 (t - 1) / t of the bytes over the GPU link. Across n nodes of g GPUs,
// two levels, as NCCL's hierarchical algorithms move the data: a reduce-scatter within each
// node and an all-gather after it, (g - 1) / g of the bytes each over the GPU link, between
// them an all-reduce of each GPU's 1 / g share with its peers of the other nodes, 2 (n - 1) /
// n of it over the GPU's NIC. The bytes a GPU moves are the flat ring's, 2 (gn - 1) / gn; a
// g-th of them, not all, crosses the NIC. One latency per call: NCCL's across nodes.
void RooflineModel::price_tp_all_reduce(OperatorCost& op, double calls,
                                        double bytes_per_rank) const noexcept {
  const double t = static_cast<double>(options_.parallelism.tensor);
  if (tp_nodes_ <= 1) {
    price_collective(op, calls, bytes_per_rank, 2 * (t - 1) / t, all_reduce_latency_s_,
                     tp_link_bytes_per_s_);
    return;
  }
  const double g = tp_gpus_per_node_, n = tp_nodes_;
  const double within_node = 2 * (g - 1) / g * bytes_per_rank;
  const double across_nodes = 2 * (n - 1) / n * bytes_per_rank / g;
  op.bytes = calls * (within_node + across_nodes);
  op.time_s = calls * (all_reduce_latency_s_ + within_node / gpu_link_bytes_per_s_ +
                       across_nodes / tp_link_bytes_per_s_);
  op.bound = Bound::Network;
}

void RooflineModel::price_communication(IterationCost& cost, double tokens,
                                        double moe_tokens) const noexcept {
  const double a = activation_bytes_;
  const double l = layers_;
  const double m = moe_ ? moe_layers_ : l;
  const double tp = static_cast<double>(options_.parallelism.tensor);
  if (tp > 1) {
    // An all-reduce after attention and after the MLP of every layer.
    price_tp_all_reduce(cost.at(OperatorKind::TpAllReduce), 2 * l, tokens * hidden_ * a);
  }
  if (options_.parallelism.pipeline > 1) {
    price_collective(cost.at(OperatorKind::PpSend), 1, tokens * hidden_ * a, 1, pp_latency_s_,
                     pp_link_bytes_per_s_);
  }
  if (expert_degree_ > 1 && m > 0) {
    // Each GPU dispatches its 1 / EP share of the step's tokens to their experts and takes
    // the outputs back, in every MoE layer; the TP all-reduces stay (they stand in for
    // gathering the tokens back for the next layer's TP attention).
    ExpertParallelShape ep;
    ep.tokens = moe_tokens / expert_degree_;
    ep.hidden = hidden_;
    ep.activation_bytes = a;
    ep.experts_per_token = experts_per_token_;
    ep.degree = expert_degree_;
    ep.load_imbalance = options_.expert_load_imbalance;
    const AllToAllCost exchange = expert_parallel_all_to_all(hardware_, ep);
    OperatorCost& op = cost.at(OperatorKind::ExpertAllToAll);
    op.bytes = m * 2 * (exchange.intra_node_bytes + exchange.inter_node_bytes);
    op.time_s = m * exchange.time_s;
    op.bound = Bound::Network;
  }
}

}  // namespace servesim
