#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace servesim {

// The operators of one decoder iteration, in execution order. For mixture-of-experts models
// mlp_up and mlp_down cover the routed experts (and the router).
enum class OperatorKind : std::size_t {
  QkvProj,
  AttentionPrefill,
  AttentionDecode,
  OutProj,
  MlpUp,
  MlpAct,
  MlpDown,
  Norms,  // layer norms, residual adds, rotary embedding, embedding lookup
  LmHead,
  TpAllReduce,
  PpSend,
  ExpertAllToAll,  // expert parallelism's dispatch and combine in the MoE layers
  Overhead,        // per-iteration and per-sequence host work
};
inline constexpr std::size_t kOperatorCount = 13;
std::string_view operator_name(OperatorKind kind) noexcept;

enum class Bound { None, Compute, Memory, Network, Overhead };
std::string_view bound_name(Bound bound) noexcept;

struct OperatorCost {
  double flops = 0;
  double bytes = 0;   // bytes moved through HBM, or over the link for collectives
  double time_s = 0;  // including per-kernel overheads
  // FLOP/byte at which the achieved compute and memory ceilings meet for this operator, the
  // compute ceiling in useful FLOP/s (masked and idle work lower it): the operator is
  // compute-bound exactly when its intensity exceeds this.
  double balance_flops_per_byte = 0;
  Bound bound = Bound::None;
  bool present() const noexcept { return time_s > 0; }
  double intensity_flops_per_byte() const noexcept { return bytes > 0 ? flops / bytes : 0; }
};

// The price of one iteration: a fixed-size breakdown, so pricing never allocates.
struct IterationCost {
  std::array<OperatorCost, kOperatorCount> operators{};
  double total_time_s = 0;

  const OperatorCost& at(OperatorKind kind) const noexcept {
    return operators[static_cast<std::size_t>(kind)];
  }
  OperatorCost& at(OperatorKind kind) noexcept { return operators[static_cast<std::size_t>(kind)]; }
  double total_flops() const noexcept;
  double total_bytes() const noexcept;
  // Time spent in operators of the given bound.
  double time_s(Bound bound) const noexcept;
  // The bound that accounts for the most time.
  Bound dominant_bound() const noexcept;
};

}  // namespace servesim
