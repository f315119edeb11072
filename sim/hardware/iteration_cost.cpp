#include "sim/hardware/iteration_cost.h"

namespace servesim {

std::string_view operator_name(OperatorKind kind) noexcept {
  switch (kind) {
    case OperatorKind::QkvProj:
      return "qkv_proj";
    case OperatorKind::AttentionPrefill:
      return "attention_prefill";
    case OperatorKind::AttentionDecode:
      return "attention_decode";
    case OperatorKind::OutProj:
      return "o_proj";
    case OperatorKind::MlpUp:
      return "mlp_up";
    case OperatorKind::MlpAct:
      return "mlp_act";
    case OperatorKind::MlpDown:
      return "mlp_down";
    case OperatorKind::Norms:
      return "norms";
    case OperatorKind::LmHead:
      return "lm_head";
    case OperatorKind::TpAllReduce:
      return "tp_allreduce";
    case OperatorKind::PpSend:
      return "pp_send";
    case OperatorKind::ExpertAllToAll:
      return "ep_all_to_all";
    case OperatorKind::Overhead:
      return "overhead";
  }
  return "?";
}

std::string_view bound_name(Bound bound) noexcept {
  switch (bound) {
    case Bound::None:
      return "none";
    case Bound::Compute:
      return "compute";
    case Bound::Memory:
      return "memory";
    case Bound::Network:
      return "network";
    case Bound::Overhead:
      return "overhead";
  }
  return "?";
}

double IterationCost::total_flops() const noexcept {
  double sum = 0;
  for (const auto& op : operators)
    sum += op.flops;
  return sum;
}

double IterationCost::total_bytes() const noexcept {
  double sum = 0;
  for (const auto& op : operators)
    sum += op.bytes;
  return sum;
}

double IterationCost::time_s(Bound bound) const noexcept {
  double sum = 0;
  for (const auto& op : operators) {
    if (op.bound == bound) sum += op.time_s;
  }
  return sum;
}

Bound IterationCost::dominant_bound() const noexcept {
  Bound best = Bound::None;
  double best_time = 0;
  for (const Bound b : {Bound::Compute, Bound::Memory, Bound::Network, Bound::Overhead}) {
    if (const double t = time_s(b); t > best_time) {
      best = b;
      best_time = t;
    }
  }
  return best;
}

}  // namespace servesim
