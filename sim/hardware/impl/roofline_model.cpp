#include "sim/hardware/impl/roofline_model.h"

#include <algorithm>
#include <cmath>

#include "sim/hardware/kernel_work.h"

namespace servesim {

RooflineModel::RooflineModel(const ModelSpec& model, const HardwareProfile& hardware,
                             const RooflineOptions& options)
    : hardware_(hardware), options_(options) {
  const ShardShape s = shard_model(model, options.parallelism);
  if (options.weight_dtype == DType::FP32) {
    compute_dtype_ = DType::FP32;
  } else if (options.weight_dtype == DType::FP8 && hardware.supports(DType::FP8)) {
    compute_dtype_ = DType::FP8;
  } else {
    compute_dtype_ = options.weight_dtype == DType::FP16 ? DType::FP16 : DType::BF16;
  }
  moe_ = model.is_moe();
  gated_ = model.mlp == MlpKind::Gated;
  layers_ = static_cast<double>(s.layers);
  hidden_ = static_cast<double>(s.hidden);
  heads_ = static_cast<double>(s.heads);
  kv_heads_ = static_cast<double>(s.kv_heads);
  head_dim_ = static_cast<double>(s.head_dim);
  intermediate_ = static_cast<double>(s.intermediate);
  vocab_ = static_cast<double>(s.vocab);
  experts_ = static_cast<double>(s.experts);
  experts_per_token_ = static_cast<double>(s.experts_per_token);
  weight_bytes_ = bytes_per_element(options.weight_dtype);
  other_weight_bytes_ = is_quantized(options.weight_dtype) ? 2.0 : weight_bytes_;
  activation_bytes_ = options.weight_dtype == DType::FP32 ? 4.0 : 2.0;
  kv_bytes_ = bytes_per_element(options.kv_dtype);
  const double peak = hardware.supports(compute_dtype_) ? hardware.peak_flops(compute_dtype_)
                                                        : hardware.peak_flops(DType::BF16);
  compute_flops_per_s_ = peak;
  memory_bytes_per_s_ = hardware.memory_bandwidth_bytes_per_s;
  elementwise_ = {hardware.efficiency.gemm_compute, 0, hardware.efficiency.memory_bandwidth, 0,
                  hardware.overheads.kernel_launch_s};
}

double RooflineModel::peak_balance_flops_per_byte() const noexcept {
  return compute_flops_per_s_ / memory_bytes_per_s_;
}

void RooflineModel::price(OperatorCost& op, double flops, double bytes,
                          const KernelCeilings& ceilings, double size, double kernels,
                          double masked_flops) const noexcept {
  const double compute_s =
      ceilings.compute_s(flops / compute_flops_per_s_, size, masked_flops / compute_flops_per_s_);
  const double memory_s = ceilings.memory_s(bytes / memory_bytes_per_s_, size);
  op.flops = flops;
  op.bytes = bytes;
  // Achieved FLOP/s over achieved bytes/s at this size.
  op.balance_flops_per_byte = ceilings.memory_s(1 / memory_bytes_per_s_, size) /
                              ceilings.compute_s(1 / compute_flops_per_s_, size);
  op.bound = compute_s > memory_s ? Bound::Compute : Bound::Memory;
  op.time_s = std::max(compute_s, memory_s) + kernels * ceilings.fixed_s;
}

void RooflineModel::price_collective(OperatorCost& op, double calls, double bytes_per_rank,
                                     double ring_factor) const noexcept {
  const double link = hardware_.gpu_link_bandwidth_bytes_per_s * hardware_.efficiency.gpu_link;
  op.bytes = calls * ring_factor * bytes_per_rank;
  op.time_s = calls * hardware_.overheads.collective_latency_s + op.bytes / link;
  op.bound = Bound::Network;
}

IterationCost RooflineModel::estimate(const BatchShape& shape) const {
  IterationCost cost;
  if (shape.empty()) return cost;
  const double tokens = static_cast<double>(shape.tokens());
  const double prefill_tokens = static_cast<double>(shape.prefill_tokens);
  const double decode_sequences = static_cast<double>(shape.decode_sequences);
  const double a = activation_bytes_;
  const double l = layers_;
  const KernelCeilings& gemm = hardware_.kernels.gemm;
  const double q_width = heads_ * head_dim_;
  const double kv_width = kv_heads_ * head_dim_;
  const double qkv_width = q_width + 2 * kv_width;

  // One kernel per layer: the work of one layer times the layers of the stage.
  const auto per_layer = [&](OperatorKind kind, const KernelWork& w, const KernelCeilings& k,
                             double size) {
    price(cost.at(kind), l * w.flops, l * w.bytes, k, size, l, l * w.masked_flops);
  };
  per_layer(OperatorKind::QkvProj, gemm_work(tokens, qkv_width, hidden_, weight_bytes_, a), gemm,
            tokens);
  if (shape.prefill_tokens > 0) {
    per_layer(
        OperatorKind::AttentionPrefill,
        prefill_attention_work(prefill_tokens, static_cast<double>(shape.prefill_context_tokens),
                               shape.prefill_attention_pairs, shape.prefill_masked_pairs, q_width,
                               kv_width, a, kv_bytes_),
        hardware_.kernels.prefill_attention,
        prefill_tokens / static_cast<double>(shape.prefill_sequences));
  }
  if (shape.decode_sequences > 0) {
    per_layer(
        OperatorKind::AttentionDecode,
        decode_attention_work(decode_sequences, static_cast<double>(shape.decode_context_tokens),
                              q_width, kv_width, a, kv_bytes_),
        hardware_.kernels.decode_attention, decode_sequences);
  }
  per_layer(OperatorKind::OutProj, gemm_work(tokens, hidden_, q_width, weight_bytes_, a), gemm,
            tokens);

  // With top-k routing over E experts, T tokens touch E (1 - (1 - k/E)^T) distinct experts
  // in expectation (uniform routing): the weights actually streamed.
  const double experts_read =
      moe_ ? experts_ * (1 - std::pow(1 - experts_per_token_ / experts_, tokens)) : 1.0;
  const double routed_tokens = tokens * experts_per_token_;
  const double up_width = (gated_ ? 2 : 1) * intermediate_;
  const double router_flops = moe_ ? 2 * tokens * hidden_ * experts_ : 0;
  price(cost.at(OperatorKind::MlpUp), l * (2 * routed_tokens * hidden_ * up_width + router_flops),
        l * (experts_read * hidden_ * up_width * weight_bytes_ + tokens * hidden_ * a +
             routed_tokens * up_width * a),
        gemm, tokens, moe_ ? 2 * l : l);
  price(cost.at(OperatorKind::MlpAct), l * 4 * routed_tokens * intermediate_,
        l * routed_tokens * (up_width + intermediate_) * a, elementwise_, tokens, l);
  price(cost.at(OperatorKind::MlpDown), l * 2 * routed_tokens * intermediate_ * hidden_,
        l * (experts_read * intermediate_ * hidden_ * weight_bytes_ +
             routed_tokens * intermediate_ * a + tokens * hidden_ * a),
        gemm, tokens, l);

  // Two norms (read and write the hidden state), two residual adds (read two, write one),
  // rotary embedding of Q and K, and the embedding gather: all streaming kernels.
  const double norm_bytes = tokens * hidden_ * a * (2 * 2 + 2 * 3) + tokens * 2 * qkv_width * a;
  price(cost.at(OperatorKind::Norms), l * tokens * hidden_ * 20, l * norm_bytes, elementwise_,
        tokens, 5 * l);

  if (shape.sampled_sequences > 0) {
    const double sampled = static_cast<double>(shape.sampled_sequences);
    price(cost.at(OperatorKind::LmHead), 2 * sampled * hidden_ * vocab_,
          hidden_ * vocab_ * other_weight_bytes_ + sampled * (hidden_ * a + vocab_ * 4), gemm,
          sampled, 1);
  }

  const double tp = static_cast<double>(options_.parallelism.tensor);
  if (tp > 1) {
    // Ring all-reduce after attention and after the MLP of every layer.
    price_collective(cost.at(OperatorKind::TpAllReduce), 2 * l, tokens * hidden_ * a,
                     2 * (tp - 1) / tp);
  }
  if (options_.parallelism.pipeline > 1) {
    price_collective(cost.at(OperatorKind::PpSend), 1, tokens * hidden_ * a, 1);
  }

  OperatorCost& overhead = cost.at(OperatorKind::Overhead);
  overhead.time_s = hardware_.overheads.iteration_s +
                    hardware_.overheads.per_sequence_s * static_cast<double>(shape.sequences());
  overhead.bound = Bound::Overhead;

  for (const auto& op : cost.operators)
    cost.total_time_s += op.time_s;
  return cost;
}

}  // namespace servesim
