// The GEMMs outside the MLP (attention projections, LM head) and the kernel pricing every
// operator family shares: max(compute, memory) under a kernel class's ceilings.
#include <algorithm>
#include <vector>

#include "sim/hardware/data_parallel.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/hardware/kernel_work.h"
#include "sim/hardware/moe_routing.h"

namespace servesim {

RooflineModel::KernelTime RooflineModel::kernel_time(double flops, double bytes,
                                                     const KernelCeilings& ceilings, double size,
                                                     double kernels, double masked_flops,
                                                     double idle_flops) const noexcept {
  KernelTime t;
  t.compute_s =
      ceilings.compute_s(flops / compute_flops_per_s_, size, masked_flops / compute_flops_per_s_,
                         idle_flops / compute_flops_per_s_);
  t.memory_s = ceilings.memory_s(bytes / memory_bytes_per_s_, size);
  t.time_s = std::max(t.compute_s, t.memory_s) + kernels * ceilings.fixed_s;
  return t;
}

void RooflineModel::price(OperatorCost& op, double flops, double bytes,
                          const KernelCeilings& ceilings, double size, double kernels,
                          double masked_flops, double idle_flops) const noexcept {
  record(op, flops, bytes,
         kernel_time(flops, bytes, ceilings, size, kernels, masked_flops, idle_flops), ceilings,
         size);
}

void RooflineModel::record(OperatorCost& op, double flops, double bytes, const KernelTime& t,
                           const KernelCeilings& ceilings, double size) const noexcept {
  op.flops = flops;
  op.bytes = bytes;
  // Achieved FLOP/s over achieved bytes/s at this size. The achieved FLOP/s counts the
  // useful FLOPs only, so the masked pairs and idle tile slots that slow the compute side
  // lower it: the intensity exceeds the balance exactly when the operator is compute-bound.
  if (flops > 0 && bytes > 0) {
    op.balance_flops_per_byte = (flops / t.compute_s) / (bytes / t.memory_s);
  } else {
    op.balance_flops_per_byte = ceilings.memory_s(1 / memory_bytes_per_s_, size) /
                                ceilings.compute_s(1 / compute_flops_per_s_, size);
  }
  op.bound = t.compute_s > t.memory_s ? Bound::Compute : Bound::Memory;
  op.time_s = t.time_s;
}

double RooflineModel::gemm_compute_s(const GemmPart& part,
                                     const KernelCeilings& ceilings) const noexcept {
  const GemmComputeWork w = gemm_compute_work(part.kernel, part.flops, part.idle_flops, part.size,
                                              part.peak_flops_per_s, gemv_flops_per_s_);
  return ceilings.compute_s(w.peak_s, w.size, 0, w.idle_peak_s);
}

void RooflineModel::price_gemm(OperatorCost& op, std::initializer_list<GemmPart> parts,
                               double bytes, const KernelCeilings& ceilings, double size,
                               double kernels) const noexcept {
  KernelTime t;
  double flops = 0;
  for (const GemmPart& part : parts) {
    t.compute_s += gemm_compute_s(part, ceilings);
    flops += part.flops;
  }
  t.memory_s = ceilings.memory_s(bytes / memory_bytes_per_s_, size);
  t.time_s = std::max(t.compute_s, t.memory_s) + kernels * ceilings.fixed_s;
  record(op, flops, bytes, t, ceilings, size);
}

RooflineModel::GemmPart RooflineModel::dense_gemm(GemmFamily family, double m, double n, double k,
                                                  double layers, const KernelCeilings& ceilings,
                                                  double peak_flops_per_s) const noexcept {
  GemmPart part;
  part.kernel = choose_gemm_kernel(family, block_scaled_, m, n, gemm_tiling(hardware_, ceilings),
                                   fp8_cuda_core_tokens_);
  part.flops = layers * (2 * m * n * k);
  // A fitted kernel's idle slots are priced at the class's quantization weight (gemm_compute_s).
  part.idle_flops = layers * kernel_idle_flops(part.kernel, m, n, k, hardware_.sm_count);
  part.size = m;
  part.peak_flops_per_s = peak_flops_per_s;
  return part;
}

void RooflineModel::price_projections(IterationCost& cost, const BatchShape& shape,
                                      double tokens) const noexcept {
  const double a = activation_bytes_;
  const double l = layers_;
  const KernelClasses& classes = kernels_;
  const KernelCeilings& qkv = classes.gemm_for(GemmOperator::Qkv);
  const KernelCeilings& out = classes.gemm_for(GemmOperator::Out);
  // One kernel per layer: the work of one layer times the layers of the stage.
  const auto per_layer = [&](OperatorKind kind, double n, double k, const KernelCeilings& c) {
    const KernelWork w = gemm_work(tokens, n, k, attention_weight_bytes_, a);
    price_gemm(cost.at(kind),
               {dense_gemm(attention_family_, tokens, n, k, l, c, attention_peak_flops_per_s_)},
               l * w.bytes, c, tokens, l);
  };
  per_layer(OperatorKind::QkvProj, qkv_width_, hidden_, qkv);
  per_layer(OperatorKind::OutProj, hidden_, o_width_, out);
  if (shape.sampled_sequences > 0) {
    // The LM head's weights stay in 16 bits: a cublas GEMM whatever the layers' format.
    const double sampled = static_cast<double>(shape.sampled_sequences);
    price_gemm(cost.at(OperatorKind::LmHead),
               {dense_gemm(GemmFamily::Cublas, sampled, vocab_, hidden_, 1, classes.gemm,
                           wide_peak_flops_per_s_)},
               hidden_ * vocab_ * other_weight_bytes_ + sampled * (hidden_ * a + vocab_ * 4),
               classes.gemm, sampled, 1);
  }
}

std::vector<RooflineModel::GemmChoice> RooflineModel::gemm_choices(
    const BatchShape& replica) const {
  std::vector<GemmChoice> choices;
  if (replica.empty()) return choices;
  const BatchShape shape = busiest_attention_rank(replica, data_ranks_);
  const double tokens = graph_tokens(shape).value_or(static_cast<double>(shape.tokens()));
  const auto add = [&](OperatorKind op, GemmFamily family, double m, double n,
                       const KernelCeilings& c) {
    GemmChoice g;
    g.op = op;
    g.m = m;
    g.kernel = choose_gemm_kernel(family, block_scaled_, m, n, gemm_tiling(hardware_, c),
                                  fp8_cuda_core_tokens_);
    choices.push_back(g);
  };
  add(OperatorKind::QkvProj, attention_family_, tokens, qkv_width_,
      kernels_.gemm_for(GemmOperator::Qkv));
  add(OperatorKind::OutProj, attention_family_, tokens, hidden_,
      kernels_.gemm_for(GemmOperator::Out));
  const double up_width = (gated_ ? 2 : 1) * intermediate_;
  if (moe_) {
    const double moe_tokens = tokens * static_cast<double>(data_ranks_);
    const Grouped grouped = grouped_kernel(moe_tokens);
    const MoeRouting routing =
        route_tokens(moe_tokens, routed_probability(), local_experts_, grouped.kernel.tile_m);
    for (const OperatorKind op : {OperatorKind::MlpUp, OperatorKind::MlpDown}) {
      GemmChoice g;
      g.op = op;
      g.m = moe_tokens;
      g.kernel = grouped.kernel;
      g.tokens_per_expert = routing.tokens_per_expert;
      g.experts_touched = routing.experts_touched;
      choices.push_back(g);
    }
  } else {
    add(OperatorKind::MlpUp, weight_family_, tokens, up_width,
        kernels_.gemm_for(GemmOperator::MlpUp));
    add(OperatorKind::MlpDown, weight_family_, tokens, hidden_,
        kernels_.gemm_for(GemmOperator::MlpDown));
  }
  if (shape.sampled_sequences > 0) {
    add(OperatorKind::LmHead, GemmFamily::Cublas, static_cast<double>(shape.sampled_sequences),
        vocab_, kernels_.gemm);
  }
  return choices;
}

}  // namespace servesim
