#include "sim/hardware/impl/roofline_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "sim/hardware/data_parallel.h"
#include "sim/hardware/expert_parallel.h"
#include "sim/hardware/kernel_work.h"
#include "sim/model/model_size.h"

namespace servesim {

RooflineModel::RooflineModel(const ModelSpec& model, const HardwareProfile& hardware,
                             const RooflineOptions& options)
    : hardware_(hardware), options_(options) {
  const ShardShape s = shard_model(model, options.parallelism);
  if (options.weight_dtype == DType::FP32) {
    compute_dtype_ = DType::FP32;
  } else if ((options.weight_dtype == DType::FP8 || options.weight_dtype == DType::FP4) &&
             hardware.supports(options.weight_dtype)) {
    compute_dtype_ = options.weight_dtype;
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
  const double peak = hardware.supports(compute_dtype_) ? hardware.peak_flops(compute_dtype_)
                                                        : hardware.peak_flops(DType::BF16);
  compute_flops_per_s_ = peak;
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
  // A factor f on a class's time: every term of KernelCeilings::kernel_s scales by f.
  const auto scaled = [](KernelCeilings k, double f) {
    k.compute_efficiency /= f;
    k.memory_efficiency /= f;
    k.fixed_s *= f;
    return k;
  };
  kernels_ = hardware.kernels;
  kernels_.gemm = scaled(kernels_.gemm, factors.gemm);
  for (auto& own : kernels_.gemm_operators) {
    if (own) own = scaled(*own, factors.gemm);
  }
  kernels_.decode_attention = scaled(kernels_.decode_attention, factors.decode_attention);
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

IterationCost RooflineModel::estimate(const BatchShape& replica) const {
  IterationCost cost;
  if (replica.empty()) return cost;
  // With data-parallel attention every layer but the MoE computes the busiest rank's share.
  const BatchShape shape = busiest_attention_rank(replica, data_ranks_);
  // The dense layers compute the tokens of the graph that runs the step (padding included).
  const std::optional<double> graph = graph_tokens(shape);
  const double tokens = graph.value_or(static_cast<double>(shape.tokens()));
  const double prefill_tokens = static_cast<double>(shape.prefill_tokens);
  const double a = activation_bytes_;
  const double l = layers_;
  const KernelClasses& classes = kernels_;
  const KernelCeilings& qkv = classes.gemm_for(GemmOperator::Qkv);
  const KernelCeilings& out = classes.gemm_for(GemmOperator::Out);
  const KernelCeilings& up = classes.gemm_for(GemmOperator::MlpUp);
  const KernelCeilings& down = classes.gemm_for(GemmOperator::MlpDown);
  const auto tiling = [this](const KernelCeilings& k) { return gemm_tiling(hardware_, k); };
  const double q_width = attention_q_width_;
  const double kv_width = attention_kv_width_;
  const double qkv_width = qkv_width_;

  // One kernel per layer: the work of one layer times the layers of the stage.
  const auto per_layer = [&](OperatorKind kind, const KernelWork& w, const KernelCeilings& k,
                             double size) {
    price(cost.at(kind), l * w.flops, l * w.bytes, k, size, l, l * w.masked_flops,
          l * w.idle_flops);
  };
  per_layer(OperatorKind::QkvProj,
            gemm_work(tokens, qkv_width, hidden_, attention_weight_bytes_, a, tiling(qkv)), qkv,
            tokens);
  if (shape.prefill_tokens > 0) {
    // Attention layers over what their masks reach: full layers the whole context, windowed
    // ones (when the shape kept their sums, see AttentionSpans) the pairs and keys of their
    // window or chunk; recurrent layers update their state once per token, reading and
    // writing it once per sequence.
    const auto attention_work = [&](double context, double pairs, double masked) {
      return prefill_attention_work(prefill_tokens, context, pairs, masked, q_width, kv_width, a,
                                    kv_bytes_);
    };
    const KernelWork w = attention_work(static_cast<double>(shape.prefill_context_tokens),
                                        shape.prefill_attention_pairs, shape.prefill_masked_pairs);
    const double attention_layers = l - recurrent_layers_;
    double flops = attention_layers * w.flops, bytes = attention_layers * w.bytes;
    double masked_flops = attention_layers * w.masked_flops;
    if (window_layers_ + chunk_layers_ > 0 && shape.spans == spans_) {
      flops = full_layers_ * w.flops;
      bytes = full_layers_ * w.bytes;
      masked_flops = full_layers_ * w.masked_flops;
      const auto add_windowed = [&](double layers, const WindowedPrefill& sums) {
        if (layers == 0) return;
        const KernelWork k = attention_work(sums.context_keys, sums.pairs, sums.masked_pairs);
        flops += layers * k.flops;
        bytes += layers * k.bytes;
        masked_flops += layers * k.masked_flops;
      };
      add_windowed(window_layers_, shape.prefill_window);
      add_windowed(chunk_layers_, shape.prefill_chunked);
    }
    if (recurrent_layers_ > 0) {
      flops += recurrent_layers_ * 6 * recurrent_state_elements_ * prefill_tokens;
      bytes += recurrent_layers_ * 2 * recurrent_state_elements_ * a *
               static_cast<double>(shape.prefill_sequences);
    }
    price(cost.at(OperatorKind::AttentionPrefill), flops, bytes, kernels_.prefill_attention,
          prefill_tokens / static_cast<double>(shape.prefill_sequences), l, masked_flops, 0);
  }
  if (shape.decode_sequences > 0) {
    const DecodeAttention attention = decode_attention(shape.decode_sequences);
    const double context = static_cast<double>(shape.decode_context_tokens);
    record(cost.at(OperatorKind::AttentionDecode),
           attention.layers * attention.flops(context) + attention.extra_flops(context),
           attention.layers * attention.bytes(context) + attention.extra_bytes(context),
           attention.time(context), kernels_.decode_attention,
           static_cast<double>(shape.decode_sequences));
  }
  per_layer(OperatorKind::OutProj,
            gemm_work(tokens, hidden_, o_width_, attention_weight_bytes_, a, tiling(out)), out,
            tokens);

  // With top-k routing over E experts, T tokens touch E (1 - (1 - k/E)^T) distinct experts
  // in expectation (uniform routing): the weights actually streamed.
  // Shared experts: as many more experts every token passes through (their width over the
  // routed experts' width).
  // With data-parallel attention the MoE layers take every rank's tokens, each rank padded
  // to the busiest one's count (as vLLM pads its DP ranks' batches to the same size); the
  // shared experts, sliced by TP within a rank, its own.
  const double ranks = static_cast<double>(data_ranks_);
  const double moe_tokens = tokens * ranks;
  const double experts_read =
      moe_ ? local_experts_ * (1 - std::pow(1 - experts_per_token_ / experts_, moe_tokens)) +
                 shared_experts_
           : 1.0;
  const double routed_tokens = tokens * (ranks * expert_copies_per_token_ + shared_experts_);
  const double up_width = (gated_ ? 2 : 1) * intermediate_;
  const double router_flops = moe_ ? 2 * tokens * hidden_ * experts_ : 0;
  // Each expert read runs one GEMM over its share of the routed tokens.
  const double expert_tokens = routed_tokens / experts_read;
  // An MoE model's dense layers (DeepSeek's first three, Llama 4's interleaved ones) run
  // one MLP of their own width.
  const double m = moe_ ? moe_layers_ : l;
  const double dl = moe_ ? dense_layers_ : 0;
  const double dense_up = (gated_ ? 2 : 1) * dense_intermediate_;
  const double di = dense_intermediate_;
  const auto dense = [&](double value) { return dl > 0 ? value : 0.0; };
  price(cost.at(OperatorKind::MlpUp),
        m * (2 * routed_tokens * hidden_ * up_width + router_flops) +
            dense(dl * 2 * tokens * hidden_ * dense_up),
        m * (experts_read * hidden_ * up_width * weight_bytes_ + tokens * hidden_ * a +
             routed_tokens * up_width * a) +
            dense(dl * (hidden_ * dense_up * weight_bytes_ + tokens * (hidden_ + dense_up) * a)),
        up, tokens, moe_ ? 2 * m + dl : l, 0,
        m * experts_read * gemm_idle_flops(expert_tokens, up_width, hidden_, tiling(up)) +
            dense(dl * gemm_idle_flops(tokens, dense_up, hidden_, tiling(up))));
  price(
      cost.at(OperatorKind::MlpAct),
      m * 4 * routed_tokens * intermediate_ + dense(dl * 4 * tokens * di),
      m * routed_tokens * (up_width + intermediate_) * a + dense(dl * tokens * (dense_up + di) * a),
      elementwise_, tokens, l);
  price(cost.at(OperatorKind::MlpDown),
        m * 2 * routed_tokens * intermediate_ * hidden_ + dense(dl * 2 * tokens * di * hidden_),
        m * (experts_read * intermediate_ * hidden_ * weight_bytes_ +
             routed_tokens * intermediate_ * a + tokens * hidden_ * a) +
            dense(dl * (di * hidden_ * weight_bytes_ + tokens * (di + hidden_) * a)),
        down, tokens, l, 0,
        m * experts_read * gemm_idle_flops(expert_tokens, hidden_, intermediate_, tiling(down)) +
            dense(dl * gemm_idle_flops(tokens, hidden_, di, tiling(down))));

  // Two norms (read and write the hidden state), two residual adds (read two, write one),
  // rotary embedding of Q and K, and the embedding gather: all streaming kernels. Fused,
  // each add and its norm read the residual and the input and write both, in one kernel.
  const bool fused = options_.engine.kernels.fused_norms;
  const double norm_bytes =
      tokens * hidden_ * a * (fused ? 2 * 4 : 2 * 2 + 2 * 3) + tokens * 2 * qkv_width * a;
  price(cost.at(OperatorKind::Norms), l * tokens * hidden_ * 20, l * norm_bytes, elementwise_,
        tokens, (fused ? 3 : 5) * l);

  if (shape.sampled_sequences > 0) {
    const double sampled = static_cast<double>(shape.sampled_sequences);
    price(cost.at(OperatorKind::LmHead), 2 * sampled * hidden_ * vocab_,
          hidden_ * vocab_ * other_weight_bytes_ + sampled * (hidden_ * a + vocab_ * 4),
          classes.gemm, sampled, 1, 0,
          gemm_idle_flops(sampled, vocab_, hidden_, tiling(classes.gemm)));
  }

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

  // The host's share: what the engine's host work and launches add beyond the device time.
  const double device_s =
      device_without_decode_attention(cost) + cost.at(OperatorKind::AttentionDecode).time_s;
  cost.total_time_s = step_time_s(device_s, step_overheads(shape, graph.has_value()));
  OperatorCost& overhead = cost.at(OperatorKind::Overhead);
  overhead.time_s = cost.total_time_s - device_s;
  overhead.bound = Bound::Overhead;
  return cost;
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

RooflineModel::DecodeAttention RooflineModel::decode_attention(
    std::int64_t sequences) const noexcept {
  const double n = static_cast<double>(sequences);
  const double q_width = attention_q_width_;
  const double kv_width = attention_kv_width_;
  const KernelWork per_sequence =
      decode_attention_work(n, 0, q_width, kv_width, activation_bytes_, kv_bytes_);
  const KernelCeilings& ceilings = kernels_.decode_attention;
  const double l = layers_;
  const double size = std::max(n, 1.0);
  DecodeAttention d;
  d.layers = full_layers_;
  d.window_layers = window_layers_;
  d.window_keys = n * window_tokens_;
  d.chunk_layers = chunk_layers_;
  d.chunk_keys = n * chunk_tokens_;
  // A recurrent layer's decode: the state decays, takes one rank-one update and is read out
  // (about 6 FLOPs per element), read and written once per sequence in 16 bits.
  d.recurrent_layers = recurrent_layers_;
  d.recurrent_flops = 6 * recurrent_state_elements_ * n;
  d.recurrent_bytes = 2 * recurrent_state_elements_ * activation_bytes_ * n;
  d.q_width = q_width;
  d.kv_width = kv_width;
  d.kv_bytes = kv_bytes_;
  d.sequence_bytes = per_sequence.bytes;
  d.compute_flops_per_s = compute_flops_per_s_;
  d.memory_bytes_per_s = memory_bytes_per_s_;
  d.compute_efficiency = ceilings.compute_efficiency;
  d.memory_efficiency = ceilings.memory_efficiency;
  d.compute_scale = 1 + ceilings.compute_half_size / size;
  d.memory_scale = 1 + ceilings.memory_half_size / size;
  d.fixed_s = l * ceilings.fixed_s;
  if (decode_on_cuda_cores_) {
    // CUDA cores, not the tensor cores: the fp32 peak at the engine's share, flat in the batch.
    const EngineKernelFactors& k = options_.engine.kernels;
    d.compute_flops_per_s = fp32_flops_per_s_;
    d.compute_efficiency = k.decode_attention_core_efficiency / k.decode_attention;
    d.compute_scale = 1;
    d.sequence_flops = (d.layers + d.window_layers + d.chunk_layers) *
                       d.flops(n * k.decode_attention_core_sequence_keys);
  }
  return d;
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
  const double others_s = device_without_decode_attention(estimate(replica_first));
  // With data-parallel attention the busiest rank's: its contexts grow by its sequences.
  const BatchShape first = busiest_attention_rank(replica_first, data_ranks_);
  // Every step of the run has the same sequences and tokens: the same host work and launches.
  const StepOverheads overheads = step_overheads(first, graph_tokens(first).has_value());
  // A local copy, so that nothing the loop reads can alias the durations it writes, and the
  // context worked out in doubles from a 32-bit step (exact: integers below 2^53), so that
  // the compiler vectorises the loop (a run longer than 2^31 steps takes the general path).
  const DecodeAttention attention = decode_attention(first.decode_sequences);
  const auto step_tokens = static_cast<double>(first.decode_sequences);
  const auto first_context = static_cast<double>(first.decode_context_tokens);
  double* const out = durations_s.data();
  const auto steps = static_cast<std::int32_t>(durations_s.size());
  for (std::int32_t k = 0; k < steps; ++k) {
    const double context = first_context + static_cast<double>(k) * step_tokens;
    out[k] = step_time_s(others_s + attention.time(context).time_s, overheads);
  }
}

}  // namespace servesim
