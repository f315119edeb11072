// The GEMMs outside the MLP (attention projections, LM head) and the kernel pricing every
// operator family shares: max(compute, memory) under a kernel class's ceilings.
#include <algorithm>

#include "sim/hardware/impl/roofline_model.h"
#include "sim/hardware/kernel_work.h"

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

void RooflineModel::price_projections(IterationCost& cost, const BatchShape& shape,
                                      double tokens) const noexcept {
  const double a = activation_bytes_;
  const double l = layers_;
  const KernelClasses& classes = kernels_;
  const KernelCeilings& qkv = classes.gemm_for(GemmOperator::Qkv);
  const KernelCeilings& out = classes.gemm_for(GemmOperator::Out);
  const auto tiling = [this](const KernelCeilings& k) { return gemm_tiling(hardware_, k); };
  // One kernel per layer: the work of one layer times the layers of the stage.
  const auto per_layer = [&](OperatorKind kind, const KernelWork& w, const KernelCeilings& k,
                             double size) {
    price(cost.at(kind), l * w.flops, l * w.bytes, k, size, l, l * w.masked_flops,
          l * w.idle_flops);
  };
  per_layer(OperatorKind::QkvProj,
            gemm_work(tokens, qkv_width_, hidden_, attention_weight_bytes_, a, tiling(qkv)), qkv,
            tokens);
  per_layer(OperatorKind::OutProj,
            gemm_work(tokens, hidden_, o_width_, attention_weight_bytes_, a, tiling(out)), out,
            tokens);
  if (shape.sampled_sequences > 0) {
    const double sampled = static_cast<double>(shape.sampled_sequences);
    price(cost.at(OperatorKind::LmHead), 2 * sampled * hidden_ * vocab_,
          hidden_ * vocab_ * other_weight_bytes_ + sampled * (hidden_ * a + vocab_ * 4),
          classes.gemm, sampled, 1, 0,
          gemm_idle_flops(sampled, vocab_, hidden_, tiling(classes.gemm)));
  }
}

}  // namespace servesim
