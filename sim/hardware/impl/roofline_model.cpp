#include "sim/hardware/impl/roofline_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "sim/hardware/data_parallel.h"
#include "sim/hardware/gemm_peaks.h"
#include "sim/model/model_size.h"

namespace servesim {

RooflineModel::RooflineModel(const ModelSpec& model, const HardwareProfile& hardware,
                             const RooflineOptions& options)
    : hardware_(hardware), options_(options) {
  const ShardShape s = shard_model(model, options.parallelism);
  // The GEMM kernel families (gemm_kernels.h): the tensor-core formats compute in their own units;
  // every other format is 16-bit (weight-only formats are dequantised) or fp32.
  const std::optional<WeightQuantization>& checkpoint = model.quantization;
  const bool own_format = checkpoint && checkpoint->dtype == options.weight_dtype;
  weight_family_ = gemm_family_for(hardware, options.weight_dtype, own_format);
  attention_family_ = own_format && checkpoint->attention_unquantized
                          ? gemm_family_for(hardware, DType::BF16, false)
                          : weight_family_;
  block_scaled_ = own_format && options.weight_dtype == DType::FP8 && checkpoint->group_size > 0;
  fp8_cuda_core_tokens_ = static_cast<double>(options.engine.kernels.fp8_cuda_core_gemm_max_tokens);
  if (options.weight_dtype == DType::FP32) {
    compute_dtype_ = DType::FP32;
  } else if (weight_family_ == GemmFamily::CutlassFp8 || weight_family_ == GemmFamily::CutlassFp4) {
    compute_dtype_ = gemm_family_compute_dtype(weight_family_, DType::BF16);
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
  local_experts_ = experts_;
  expert_copies_per_token_ = experts_per_token_;
  // A quantized checkpoint's own format counts its scales (and keeps what it leaves
  // unconverted in 16 bits): see linear_bytes.
  const LinearBytes linear = linear_bytes(model, options.weight_dtype);
  weight_bytes_ = linear.mlp;
  attention_weight_bytes_ = linear.attention;
  other_weight_bytes_ = linear.other;
  activation_bytes_ = options.weight_dtype == DType::FP32 ? 4.0 : 2.0;
  kv_bytes_ = bytes_per_element(options.kv_dtype);
  // The first stage's layers, the largest (ceil(layers / PP)), by kind.
  const std::int64_t stage_layers = std::min(s.layers, model.num_layers);
  double attention_in = 0, attention_out = 0;
  for (std::int64_t i = 0; i < stage_layers; ++i) {
    switch (model.attention_of(i)) {
      case LayerAttention::Full:
        full_layers_ += 1;
        break;
      case LayerAttention::SlidingWindow:
        window_layers_ += 1;
        break;
      case LayerAttention::ChunkedLocal:
        chunk_layers_ += 1;
        break;
      case LayerAttention::LinearRecurrent:
        recurrent_layers_ += 1;
        break;
    }
    (model.moe_layer(i) ? moe_layers_ : dense_layers_) += 1;
    const LayerParameters p = layer_parameters_per_gpu(model, options.parallelism, i);
    attention_in += static_cast<double>(p.attention_linear - p.attention_out);
    attention_out += static_cast<double>(p.attention_out);
  }
  const double stage = static_cast<double>(stage_layers);
  qkv_width_ = attention_in / stage / hidden_;
  o_width_ = attention_out / stage / hidden_;
  window_tokens_ = static_cast<double>(model.sliding_window_tokens.value_or(0));
  chunk_tokens_ = static_cast<double>(model.attention_chunk_tokens.value_or(0));
  for (std::int64_t i = 0; i < model.num_layers; ++i) {
    const LayerAttention kind = model.attention_of(i);
    if (kind == LayerAttention::SlidingWindow) {
      spans_.window_tokens = model.sliding_window_tokens.value_or(0);
    }
    if (kind == LayerAttention::ChunkedLocal) {
      spans_.chunk_tokens = model.attention_chunk_tokens.value_or(0);
    }
  }
  dense_intermediate_ = std::ceil(static_cast<double>(model.dense_mlp_width()) /
                                  static_cast<double>(options.parallelism.tensor));
  shared_experts_ = model.is_moe()
                        ? static_cast<double>(model.shared_experts) *
                              static_cast<double>(model.shared_expert_intermediate_size) /
                              static_cast<double>(model.intermediate_size)
                        : 0.0;
  if (options.parallelism.expert) {
    // Whole experts, E / EP a GPU, each computing its share of the routed copies (the
    // busiest GPU's, load_imbalance times the even share); the shared experts stay sliced by
    // TP, so in units of a whole routed expert a GPU computes 1 / TP of them.
    expert_degree_ = static_cast<double>(options.parallelism.expert_degree());
    data_ranks_ = options.parallelism.data;
    intermediate_ = static_cast<double>(model.intermediate_size);
    local_experts_ = experts_ / expert_degree_;
    expert_copies_per_token_ = experts_per_token_ * options.expert_load_imbalance / expert_degree_;
    shared_experts_ /= static_cast<double>(options.parallelism.tensor);
  }
  if (model.mla) {
    // Decode runs MLA absorbed: every head's query meets the latent (kv_lora_rank +
    // qk_rope_head_dim values, one per token for all heads) and its output leaves in the
    // latent's kv_lora_rank: 2 H (r + p) + 2 H r FLOPs per key, (r + p) values read.
    const MlaDims& d = *model.mla;
    attention_q_width_ = heads_ * static_cast<double>(2 * d.kv_lora_rank + d.qk_rope_head_dim) / 2;
    attention_kv_width_ = static_cast<double>(d.latent_values_per_token()) / 2;
  } else {
    attention_q_width_ = heads_ * head_dim_;
    attention_kv_width_ = kv_heads_ * head_dim_;
  }
  if (model.linear_attention) {
    const LinearAttentionDims& d = *model.linear_attention;
    recurrent_state_elements_ = static_cast<double>(d.num_value_heads / options.parallelism.tensor *
                                                    d.key_head_dim * d.value_head_dim);
  }
  compute_flops_per_s_ = peak_flops_or_bf16(hardware, compute_dtype_);
  // Cublas and marlin compute in 16 bits (or fp32): the compute format unless that is a narrow
  // tensor-core format.
  const DType wide =
      compute_dtype_ == DType::FP8 || compute_dtype_ == DType::FP4 ? DType::BF16 : compute_dtype_;
  const GemmPeaks weight_peaks = gemm_peaks(hardware, weight_family_, wide);
  wide_peak_flops_per_s_ = peak_flops_or_bf16(hardware, wide);
  weight_peak_flops_per_s_ = weight_peaks.tensor_flops_per_s;
  attention_peak_flops_per_s_ = gemm_peaks(hardware, attention_family_, wide).tensor_flops_per_s;
  gemv_flops_per_s_ = weight_peaks.gemv_flops_per_s;
  memory_bytes_per_s_ = hardware.memory_bandwidth_bytes_per_s;
  elementwise_ = {hardware.efficiency.gemm_compute, 0, hardware.efficiency.memory_bandwidth, 0,
                  hardware.overheads.kernel_launch_s};
  const EngineKernelFactors& factors = options.engine.kernels;
  all_reduce_latency_s_ =
      factors.all_reduce_latency_s.value_or(hardware.overheads.collective_latency_s);
  // Groups that span nodes cross the inter-node link: the TP group when it is larger than a
  // node, the PP sends when the stages' GPUs fill more than one (TP groups stay in a node).
  const double link = hardware.gpu_link_bandwidth_bytes_per_s * hardware.efficiency.gpu_link;
  const double nic = hardware.inter_node_bandwidth_bytes_per_s * hardware.efficiency.gpu_link;
  const double node = hardware.gpus_per_node;
  const auto tp_gpus = static_cast<double>(options.parallelism.tensor);
  const auto stage_gpus = static_cast<double>(options.parallelism.gpus());
  gpu_link_bytes_per_s_ = link;
  tp_link_bytes_per_s_ = link;
  pp_link_bytes_per_s_ = link;
  pp_latency_s_ = hardware.overheads.collective_latency_s;
  tp_gpus_per_node_ = tp_gpus;
  if (node > 0 && tp_gpus > node) {
    tp_link_bytes_per_s_ = nic;
    tp_nodes_ = std::ceil(tp_gpus / node);
    tp_gpus_per_node_ = tp_gpus / tp_nodes_;
    // An engine's custom all-reduce works within an NVLink domain only: NCCL's latency.
    all_reduce_latency_s_ =
        std::max(hardware.overheads.collective_latency_s, hardware.inter_node_latency_s);
  }
  if (node > 0 && stage_gpus > node) {
    pp_link_bytes_per_s_ = nic;
    pp_latency_s_ = std::max(pp_latency_s_, hardware.inter_node_latency_s);
  }
  // A factor f on a class's time: every term of KernelCeilings::kernel_s scales by f, the
  // memory side by `memory_f` where it has one of its own (the GEMMs' gemm_memory).
  const auto scaled = [](KernelCeilings k, double f, std::optional<double> memory_f = {}) {
    k.compute_efficiency /= f;
    k.memory_efficiency /= memory_f.value_or(f);
    k.fixed_s *= f;
    return k;
  };
  kernels_ = hardware.kernels;
  kernels_.gemm = scaled(kernels_.gemm, factors.gemm, factors.gemm_memory);
  for (auto& own : kernels_.gemm_operators) {
    if (own) own = scaled(*own, factors.gemm, factors.gemm_memory);
  }
  kernels_.decode_attention =
      scaled(hardware.kernels.decode_attention_for(options.kv_dtype, model.mla.has_value()),
             factors.decode_attention);
  if (const auto& window = hardware.kernels.decode_attention_window) {
    kernels_.decode_attention_window = scaled(*window, factors.decode_attention);
  }
  // The engine's CUDA-core decode attention, unless the model's query heads per KV head reach
  // the group at which the engine runs a tensor-core GQA kernel. MLA's absorbed decode is a
  // kernel of its own (tensor cores), never the multi-head one. A profile without an fp32 peak
  // keeps its ceilings.
  const double group = kv_heads_ > 0 ? heads_ / kv_heads_ : 1;
  decode_on_cuda_cores_ =
      factors.decode_attention_core_efficiency > 0 && !model.mla &&
      hardware.supports(DType::FP32) &&
      (factors.decode_attention_tensor_core_min_group == 0 ||
       group < static_cast<double>(factors.decode_attention_tensor_core_min_group));
  fp32_flops_per_s_ = hardware.peak_flops(DType::FP32);
  kernels_.prefill_attention = scaled(kernels_.prefill_attention, factors.prefill_attention);
  layer_kernels_ = 5 + (moe_ ? 1 : 0) + (factors.fused_norms ? 3 : 5) +
                   (options.parallelism.tensor > 1 ? 2 : 0) + (expert_degree_ > 1 ? 2 : 0);
}

double RooflineModel::peak_balance_flops_per_byte() const noexcept {
  return compute_flops_per_s_ / memory_bytes_per_s_;
}

IterationCost RooflineModel::estimate(const BatchShape& replica) const {
  IterationCost cost;
  if (replica.empty()) return cost;
  // With data-parallel attention every layer but the MoE computes the busiest rank's share.
  const BatchShape shape = busiest_attention_rank(replica, data_ranks_);
  double device_s = 0;
  StepOverheads overheads;
  if (replica.prefill_sequences == 0) {
    std::optional<DecodeStep> scratch;
    const DecodeStep& step = decode_step(replica, shape, scratch);
    cost = step.others;
    price_decode_attention(cost, shape, step.attention);
    device_s = step.others_s + cost.at(OperatorKind::AttentionDecode).time_s;
    overheads = step.overheads;
  } else {
    // The dense layers compute the tokens of the graph that runs the step (padding included).
    const std::optional<double> graph = graph_tokens(shape);
    price_dense_layers(cost, shape, graph.value_or(static_cast<double>(shape.tokens())));
    price_attention(cost, shape);
    device_s =
        device_without_decode_attention(cost) + cost.at(OperatorKind::AttentionDecode).time_s;
    overheads = step_overheads(shape, graph.has_value());
  }

  // The host's share: what the engine's host work and launches add beyond the device time.
  cost.total_time_s = step_time_s(device_s, overheads);
  OperatorCost& overhead = cost.at(OperatorKind::Overhead);
  overhead.time_s = cost.total_time_s - device_s;
  overhead.bound = Bound::Overhead;
  return cost;
}

void RooflineModel::price_dense_layers(IterationCost& cost, const BatchShape& shape,
                                       double tokens) const noexcept {
  const double a = activation_bytes_;
  const double l = layers_;
  price_projections(cost, shape, tokens);
  const double moe_tokens = price_mlp(cost, tokens);

  // Two norms (read and write the hidden state), two residual adds (read two, write one),
  // rotary embedding of Q and K, and the embedding gather: all streaming kernels. Fused,
  // each add and its norm read the residual and the input and write both, in one kernel.
  const bool fused = options_.engine.kernels.fused_norms;
  const double norm_bytes =
      tokens * hidden_ * a * (fused ? 2 * 4 : 2 * 2 + 2 * 3) + tokens * 2 * qkv_width_ * a;
  price(cost.at(OperatorKind::Norms), l * tokens * hidden_ * 20, l * norm_bytes, elementwise_,
        tokens, (fused ? 3 : 5) * l);

  price_communication(cost, tokens, moe_tokens);
}

const RooflineModel::DecodeStep& RooflineModel::decode_step(
    const BatchShape& replica, const BatchShape& shape, std::optional<DecodeStep>& scratch) const {
  // Large counts are rare and would make the memo large: priced afresh.
  constexpr std::int64_t kMemoSequences = 8192;
  if (!options_.memoize_decode_steps || replica.decode_sequences >= kMemoSequences) {
    price_decode_step(scratch.emplace(), shape);
    return *scratch;
  }
  const auto index = static_cast<std::size_t>(replica.decode_sequences);
  if (index >= decode_steps_.size()) decode_steps_.resize(index + 1);
  DecodeStep& memo = decode_steps_[index];
  if (memo.sampled_sequences != replica.sampled_sequences) {
    memo = DecodeStep{};
    price_decode_step(memo, shape);
    memo.sampled_sequences = replica.sampled_sequences;
  }
  return memo;
}

void RooflineModel::price_decode_step(DecodeStep& step, const BatchShape& shape) const {
  // The dense layers compute the tokens of the graph that runs the step (padding included).
  const std::optional<double> graph = graph_tokens(shape);
  price_dense_layers(step.others, shape, graph.value_or(static_cast<double>(shape.tokens())));
  step.others_s = device_without_decode_attention(step.others);
  step.attention = decode_attention(shape.decode_sequences);
  step.overheads = step_overheads(shape, graph.has_value());
}

std::optional<double> RooflineModel::graph_tokens(const BatchShape& shape) const noexcept {
  const auto& sizes = options_.engine.cuda_graph_capture_sizes;
  if (sizes.empty() || (shape.prefill_sequences > 0 && !options_.engine.cuda_graphs_mixed_batches))
    return std::nullopt;
  const auto it = std::lower_bound(sizes.begin(), sizes.end(), shape.tokens());
  if (it == sizes.end()) return std::nullopt;
  return static_cast<double>(*it);
}

RooflineModel::StepOverheads RooflineModel::step_overheads(const BatchShape& shape,
                                                           bool graphed) const noexcept {
  const EngineHostCosts& host = options_.engine.host;
  StepOverheads o;
  // Multi-step scheduling plans decode-only steps several at a time.
  const double schedules_per_step =
      shape.prefill_sequences > 0 ? 1.0 : 1.0 / static_cast<double>(host.decode_steps_per_schedule);
  o.host_s = host.schedule_s * schedules_per_step + host.step_s +
             host.per_sequence_s * static_cast<double>(shape.sequences()) +
             host.per_token_s * static_cast<double>(shape.tokens());
  if (!graphed && host.kernel_launch_s > 0) {
    const double attention_kernels =
        (shape.prefill_sequences > 0 ? 1.0 : 0.0) + (shape.decode_sequences > 0 ? 1.0 : 0.0);
    // Per layer, plus the LM head, the sampler and the embedding.
    o.launch_floor_s = host.kernel_launch_s * (layers_ * (layer_kernels_ + attention_kernels) + 3);
  }
  return o;
}

double RooflineModel::device_without_decode_attention(const IterationCost& cost) noexcept {
  double total_s = 0;
  for (std::size_t kind = 0; kind < kOperatorCount; ++kind) {
    if (kind != static_cast<std::size_t>(OperatorKind::AttentionDecode) &&
        kind != static_cast<std::size_t>(OperatorKind::Overhead)) {
      total_s += cost.operators[kind].time_s;
    }
  }
  return total_s;
}

void RooflineModel::estimate_decode_run(const BatchShape& replica_first,
                                        std::span<double> durations_s) const {
  if (durations_s.empty()) return;
  if (replica_first.prefill_sequences > 0 || replica_first.decode_sequences == 0 ||
      durations_s.size() > static_cast<std::size_t>(INT32_MAX)) {
    IExecutionTimeModel::estimate_decode_run(replica_first, durations_s);
    return;
  }
  // With data-parallel attention the busiest rank's: its contexts grow by its sequences.
  // Every step of the run has the same sequences and tokens: the same operators but decode
  // attention, the same host work and launches.
  const BatchShape first = busiest_attention_rank(replica_first, data_ranks_);
  std::optional<DecodeStep> scratch;
  const DecodeStep& step = decode_step(replica_first, first, scratch);
  // Local copies, so that nothing the loop reads can alias the durations it writes, and the
  // context worked out in doubles from a 32-bit step (exact: integers below 2^53; a run
  // longer than 2^31 steps takes the general path). Without windowed, chunked or recurrent
  // layers the loop takes the full-attention formula, which it inlines.
  const double others_s = step.others_s;
  const StepOverheads overheads = step.overheads;
  const DecodeAttention attention = step.attention;
  const auto step_tokens = static_cast<double>(first.decode_sequences);
  const auto first_context = static_cast<double>(first.decode_context_tokens);
  double* const out = durations_s.data();
  const auto steps = static_cast<std::int32_t>(durations_s.size());
  const auto price = [&]<bool kExtras>(std::bool_constant<kExtras>) {
    for (std::int32_t k = 0; k < steps; ++k) {
      const double context = first_context + static_cast<double>(k) * step_tokens;
      out[k] = step_time_s(others_s + attention.time<kExtras>(context).time_s, overheads);
    }
  };
  if (attention.full_only()) {
    price(std::false_type{});
  } else {
    price(std::true_type{});
  }
}

}  // namespace servesim
