#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "sim/engine/engine_costs.h"
#include "sim/hardware/execution_time_model.h"
#include "sim/hardware/gemm_kernels.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/model/dtype.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"

namespace servesim {

struct RooflineOptions {
  Parallelism parallelism;
  DType weight_dtype = DType::BF16;
  DType kv_dtype = DType::BF16;
  // What the serving engine adds: host time, CUDA graphs, kernel factors (none by default).
  EngineCosts engine;
  // With expert parallelism (parallelism.expert): the busiest GPU's routed tokens over the
  // uniform share, >= 1 (1: routing spreads tokens evenly over the EP group).
  double expert_load_imbalance = 1.0;
  // Keep the costs of decode-only steps other than their attention, by sequence count (see
  // RooflineModel::decode_step_others); off: every step priced in full. The same prices.
  bool memoize_decode_steps = true;
};

// Per-operator roofline: each operator takes max(FLOPs / achieved FLOP/s, bytes / achieved
// bandwidth) plus a fixed cost per kernel, with the achieved ceilings of its kernel class
// (GEMM, decode or prefill attention; elementwise kernels use the flat "efficiency" ones);
// collectives follow an alpha-beta model over the GPU link, or over the inter-node link when
// the group spans nodes (TP > gpus_per_node; PP: TP x PP > gpus_per_node; a profile without
// gpus_per_node keeps every group in one node). With expert parallelism each MoE layer adds
// dispatch and combine all-to-alls (expert_parallel.h) and its GPU computes whole experts,
// E / EP of them, for its share of the routed tokens. The engine's costs (EngineCosts)
// then apply: a step the CUDA graphs cover computes its padded size; one they do not takes at
// least its kernels' CPU launches; the host's work adds to the device time, or overlaps it
// (see step_time_s). All shard arithmetic is done once in the constructor so estimate() is a
// handful of multiplications. estimate() keeps a memo of decode-only steps (below), so one
// model serves one thread (each simulation builds its own).
class RooflineModel final : public IExecutionTimeModel {
 public:
  RooflineModel(const ModelSpec& model, const HardwareProfile& hardware,
                const RooflineOptions& options);
  IterationCost estimate(const BatchShape& shape) const override;
  // Decode attention is the only operator whose cost depends on the contexts: the rest is
  // priced once for the run.
  void estimate_decode_run(const BatchShape& replica_first,
                           std::span<double> durations_s) const override;
  // The model's sliding window and attention chunk, when it has such layers.
  AttentionSpans attention_spans() const noexcept override { return spans_; }

  // The numeric format the tensor cores run in: fp8 weights use fp8 units where the device
  // has them; other narrow formats are weight-only (dequantised to 16 bits).
  DType compute_dtype() const noexcept { return compute_dtype_; }
  // Peak FLOP/s over peak bandwidth for the compute format: the textbook balance point.
  double peak_balance_flops_per_byte() const noexcept;

  // The kernel each GEMM operator of a step of this shape runs (roofline_gemm.cpp), for reports:
  // not on the hot path.
  struct GemmChoice {
    OperatorKind op = OperatorKind::QkvProj;
    GemmKernel kernel;
    double m = 0;  // tokens (rows) of the GEMM; grouped: the step's tokens, all experts
    double tokens_per_expert = 0;  // grouped: routed tokens per touched expert
    double experts_touched = 0;    // grouped: of the GPU's experts
  };
  std::vector<GemmChoice> gemm_choices(const BatchShape& shape) const;

 private:
  // Every operator but attention (projections, MLP, norms, collectives) at `tokens`, the
  // tokens the step's dense layers compute.
  void price_dense_layers(IterationCost& cost, const BatchShape& shape,
                          double tokens) const noexcept;
  // A kernel's compute and memory times and its time (the larger plus its fixed costs).
  struct KernelTime {
    double compute_s = 0, memory_s = 0, time_s = 0;
  };
  // Fills `op` from totals for the whole stage under the ceilings of its kernel class at
  // `size` (see KernelCeilings); `kernels` counts its launches.
  void price(OperatorCost& op, double flops, double bytes, const KernelCeilings& ceilings,
             double size, double kernels, double masked_flops = 0,
             double idle_flops = 0) const noexcept;
  // One GEMM of an operator: `flops` useful FLOPs (the stage's) of `size` tokens run by `kernel`,
  // `idle_flops` its padded and idle slots, at `peak_flops_per_s`.
  struct GemmPart {
    GemmKernel kernel;
    double flops = 0, idle_flops = 0, size = 1, peak_flops_per_s = 1;
  };
  double gemm_compute_s(const GemmPart& part, const KernelCeilings& ceilings) const noexcept;
  // Fills `op` from GEMM parts sharing one memory stream of `bytes` at `size`: compute time summed
  // over the parts, the larger side plus `kernels` fixed costs.
  void price_gemm(OperatorCost& op, std::initializer_list<GemmPart> parts, double bytes,
                  const KernelCeilings& ceilings, double size, double kernels) const noexcept;
  // A dense GEMM of m tokens against a [k x n] weight of `family`: the kernel's part, idle FLOPs
  // per layer under its tiling (the profile's for a fitted kernel).
  GemmPart dense_gemm(GemmFamily family, double m, double n, double k, double layers,
                      const KernelCeilings& ceilings, double peak_flops_per_s) const noexcept;
  // The grouped expert GEMM of the MoE layers (roofline_moe.cpp): routed copies of the step's
  // tokens over the GPU's experts, each expert's rows padded to the family's block.
  struct Grouped {
    GemmKernel kernel;
    double row_tiles = 0;  // expected tiles of kernel.tile_m rows, all local experts
  };
  Grouped grouped_kernel(double moe_tokens) const noexcept;
  // The probability that a token's copies land on one given expert of this GPU: k / E, times the
  // busiest GPU's load imbalance with expert parallelism (at most 1).
  double routed_probability() const noexcept;
  // Fills `op` with the work and time of a kernel timed as `t`.
  void record(OperatorCost& op, double flops, double bytes, const KernelTime& t,
              const KernelCeilings& ceilings, double size) const noexcept;
  // `latency_s` per call: the engine's all-reduce latency for TP, the hardware's for PP sends.
  // `link_bytes_per_s`: the achieved bandwidth of the slowest link the group crosses.
  // The TP all-reduces: a ring over the GPU link within a node; across nodes, two levels.
  void price_tp_all_reduce(OperatorCost& op, double calls, double bytes_per_rank) const noexcept;
  void price_collective(OperatorCost& op, double calls, double bytes_per_rank, double ring_factor,
                        double latency_s, double link_bytes_per_s) const noexcept;
  KernelTime kernel_time(double flops, double bytes, const KernelCeilings& ceilings, double size,
                         double kernels, double masked_flops, double idle_flops) const noexcept;
  // Decode attention of a batch of decoding sequences as a function of their summed
  // context: the one formula estimate() and estimate_decode_run both price it by, with what
  // does not depend on the context worked out once. It has no masked pairs and no idle tile
  // slots (decode_attention_work counts none), so those terms of KernelCeilings::compute_s
  // are left out: adding their zeros would not change a bit.
  //
  // Layer groups (kv_spec.h): `layers` full-attention layers read every cached key; the
  // windowed layers read at most W (chunked: C) keys per sequence, priced from the sums as
  // min(context, sequences x W), exact when every context is past the window or none is;
  // recurrent layers read and write their state once per sequence, whatever the context.
  struct DecodeAttention {
    double layers, q_width, kv_width, kv_bytes, sequence_bytes;
    double compute_flops_per_s, memory_bytes_per_s, compute_efficiency, memory_efficiency;
    double compute_scale, memory_scale, fixed_s;
    // Fixed compute per step whatever the context, whole stage: the engine's
    // decode_attention_core_sequence_keys per sequence, as FLOPs of that many keys in every
    // attention layer (0 otherwise, which leaves the sum unchanged to the bit).
    double sequence_flops = 0;
    // Windowed layers and the keys they read at most (sequences x W, summed over layers).
    double window_layers = 0, window_keys = 0, chunk_layers = 0, chunk_keys = 0;
    // The windowed and chunked layers priced on their own ceilings (the profile's
    // decode_attention_window), as a kernel time added to the other layers'; false: one
    // kernel time for all, on the full layers' ceilings.
    bool window_apart = false;
    double window_compute_efficiency = 0, window_memory_efficiency = 0;
    double window_compute_scale = 1, window_memory_scale = 1, window_fixed_s = 0;
    // Recurrent layers' work for all sequences, per layer.
    double recurrent_layers = 0, recurrent_flops = 0, recurrent_bytes = 0;
    // Per layer.
    double flops(double context) const noexcept { return 4 * q_width * context; }
    double bytes(double context) const noexcept {
      return context * 2 * kv_width * kv_bytes + sequence_bytes;
    }
    // Whether every attention layer is a full one (no windowed, chunked or recurrent layers):
    // then time() equals time<false>(), which leaves their terms out and which a run's loop
    // inlines (estimate_decode_run).
    bool full_only() const noexcept { return window_layers + chunk_layers + recurrent_layers == 0; }
    // The windowed and recurrent layers' FLOPs and bytes: exactly 0 for a model without them
    // (or without kExtras), so that adding them leaves the full layers' figures unchanged to
    // the bit.
    template <bool kExtras = true>
    double extra_flops(double context) const noexcept {
      if (!kExtras || full_only()) return 0;
      return window_layers * flops(std::min(context, window_keys)) +
             chunk_layers * flops(std::min(context, chunk_keys)) +
             recurrent_layers * recurrent_flops;
    }
    template <bool kExtras = true>
    double extra_bytes(double context) const noexcept {
      if (!kExtras || full_only()) return 0;
      return window_layers * bytes(std::min(context, window_keys)) +
             chunk_layers * bytes(std::min(context, chunk_keys)) +
             recurrent_layers * recurrent_bytes;
    }
    // The whole stage.
    template <bool kExtras = true>
    KernelTime time(double context) const noexcept {
      if (kExtras && window_apart) return time_window_apart(context);
      KernelTime t;
      t.compute_s = (layers * flops(context) + extra_flops<kExtras>(context) + sequence_flops) /
                    compute_flops_per_s * compute_scale / compute_efficiency;
      t.memory_s = (layers * bytes(context) + extra_bytes<kExtras>(context)) / memory_bytes_per_s /
                   memory_efficiency * memory_scale;
      t.time_s = std::max(t.compute_s, t.memory_s) + fixed_s;
      return t;
    }
    // time() with the windowed and chunked layers a kernel time of their own.
    KernelTime time_window_apart(double context) const noexcept {
      const double window_flops = window_layers * flops(std::min(context, window_keys)) +
                                  chunk_layers * flops(std::min(context, chunk_keys));
      const double window_bytes = window_layers * bytes(std::min(context, window_keys)) +
                                  chunk_layers * bytes(std::min(context, chunk_keys));
      KernelTime t;
      t.compute_s =
          (layers * flops(context) + recurrent_layers * recurrent_flops + sequence_flops) /
          compute_flops_per_s * compute_scale / compute_efficiency;
      t.memory_s = (layers * bytes(context) + recurrent_layers * recurrent_bytes) /
                   memory_bytes_per_s / memory_efficiency * memory_scale;
      const double window_compute_s =
          window_flops / compute_flops_per_s * window_compute_scale / window_compute_efficiency;
      const double window_memory_s =
          window_bytes / memory_bytes_per_s / window_memory_efficiency * window_memory_scale;
      t.time_s = std::max(t.compute_s, t.memory_s) + fixed_s +
                 std::max(window_compute_s, window_memory_s) + window_fixed_s;
      t.compute_s += window_compute_s;
      t.memory_s += window_memory_s;
      return t;
    }
  };
  DecodeAttention decode_attention(std::int64_t sequences) const noexcept;

  // The operator families of a step, each in its own source file; `tokens` are the tokens
  // the dense layers compute (graph padding included), for the busiest attention rank.
  // roofline_gemm.cpp: the attention projections and the LM head.
  void price_projections(IterationCost& cost, const BatchShape& shape,
                         double tokens) const noexcept;
  // roofline_attention.cpp: prefill and decode attention.
  void price_attention(IterationCost& cost, const BatchShape& shape) const noexcept;
  // Its decode part, with the constants of the shape's decode sequences.
  void price_decode_attention(IterationCost& cost, const BatchShape& shape,
                              const DecodeAttention& attention) const noexcept;
  // roofline_moe.cpp: the MLP (dense, or routed and shared experts with the router) and its
  // activation; returns the tokens the MoE layers take (every data-parallel rank's).
  double price_mlp(IterationCost& cost, double tokens) const noexcept;
  void price_dense_mlp(IterationCost& cost, double tokens, const KernelCeilings& up,
                       const KernelCeilings& down) const noexcept;
  double price_moe_mlp(IterationCost& cost, double tokens, const KernelCeilings& up,
                       const KernelCeilings& down) const noexcept;
  // roofline_collectives.cpp: the TP all-reduces, the PP send and EP's dispatch and combine
  // of `moe_tokens`.
  void price_communication(IterationCost& cost, double tokens, double moe_tokens) const noexcept;
  // The device time is summed as (every operator but decode attention and the overhead, in
  // order) + decode attention, so that estimate_decode_run, which prices only decode
  // attention again for each iteration of a run, reproduces it exactly.
  static double device_without_decode_attention(const IterationCost& cost) noexcept;
  // What the engine adds to a step of this shape, worked out once per shape.
  struct StepOverheads {
    double host_s = 0;          // the host's work for the step
    double launch_floor_s = 0;  // CPU launches of a step no graph covers
  };
  // `graphed`: a CUDA graph runs the step (see graph_tokens), so it launches nothing.
  StepOverheads step_overheads(const BatchShape& shape, bool graphed) const noexcept;
  // A decode-only step but its contexts: every operator other than attention, their device
  // time, the decode attention's constants and the engine's overheads. They depend on the
  // replica's sequence counts alone, so estimate() and estimate_decode_run work them out
  // once per count and keep them (with the memo on, below 8,192 sequences).
  struct DecodeStep {
    std::int64_t sampled_sequences = -1;  // the replica's; -1: not priced yet
    IterationCost others;                 // attention and the overhead left at 0
    double others_s = 0;                  // device_without_decode_attention(others)
    DecodeAttention attention{};          // of the busiest attention rank's sequences
    StepOverheads overheads;
  };
  // The step of `replica` (decode-only; `shape` its busiest attention rank): the memo's, or
  // `scratch` priced afresh where the memo does not keep it.
  const DecodeStep& decode_step(const BatchShape& replica, const BatchShape& shape,
                                std::optional<DecodeStep>& scratch) const;
  void price_decode_step(DecodeStep& step, const BatchShape& shape) const;
  // Indexed by the replica's decode sequences; grows to the largest count seen.
  mutable std::vector<DecodeStep> decode_steps_;
  // The one formula of a step's time from its device time.
  double step_time_s(double device_s, const StepOverheads& o) const noexcept {
    const double launched_s = std::max(device_s, o.launch_floor_s);
    return options_.engine.host.overlaps_device ? std::max(launched_s, o.host_s)
                                                : launched_s + o.host_s;
  }
  // The tokens a step's GEMMs compute when a captured graph covers the step: its token count
  // padded to the graph's size; empty when no graph does (the step's own tokens then).
  std::optional<double> graph_tokens(const BatchShape& shape) const noexcept;

  HardwareProfile hardware_;
  KernelCeilings elementwise_;  // norms, activations, residual adds: flat ceilings
  RooflineOptions options_;
  DType compute_dtype_;
  bool moe_;
  bool gated_;
  // Per-GPU shard dimensions as doubles, ready for the arithmetic.
  double layers_, hidden_, heads_, kv_heads_, head_dim_, intermediate_, vocab_;
  double experts_, experts_per_token_;
  // Expert parallelism: the EP size (1 without), the routed experts a GPU holds (all of them,
  // each sliced by TP, without EP) and the expert copies per token it computes (k without EP;
  // k x imbalance / EP with it).
  double expert_degree_ = 1, local_experts_ = 1, expert_copies_per_token_ = 1;
  // Data-parallel attention ranks (1 without): the step is priced at the busiest rank's share
  // of the sequences (busiest_attention_rank), the MoE layers at all ranks' tokens.
  std::int64_t data_ranks_ = 1;
  double weight_bytes_, other_weight_bytes_, activation_bytes_, kv_bytes_;
  // The stage's layers by kind (see ModelSpec): attention layers by how they read the cache,
  // and MoE layers against dense ones (moe_layers_ + dense_layers_ = layers_).
  double full_layers_ = 0, window_layers_ = 0, chunk_layers_ = 0, recurrent_layers_ = 0;
  double window_tokens_ = 0, chunk_tokens_ = 0;
  AttentionSpans spans_;  // the same, for BatchShape (0 for a kind the model lacks)
  double moe_layers_ = 0, dense_layers_ = 0, dense_intermediate_ = 0, shared_experts_ = 0;
  // Attention projections per layer, averaged over the stage's layers: the widths of the
  // GEMMs before (qkv: Q, K, V, MLA's down and up projections, a recurrent layer's input
  // projections) and after (o) the attention, so that MLA, gated queries and recurrent
  // layers stream their own weights.
  double qkv_width_ = 0, o_width_ = 0, attention_weight_bytes_ = 0;
  // Attention's widths as the kernels see them: query width for FLOPs and the KV values per
  // token (MLA: one latent; decode absorbs the up projections into the query and output).
  double attention_q_width_ = 0, attention_kv_width_ = 0;
  // A recurrent layer's state elements per sequence on this GPU (0 without such layers).
  double recurrent_state_elements_ = 0;
  // The engine's decode attention runs on CUDA cores for this model (EngineKernelFactors),
  // priced against the fp32 peak.
  bool decode_on_cuda_cores_ = false;
  double fp32_flops_per_s_ = 0;
  double compute_flops_per_s_, memory_bytes_per_s_;
  double all_reduce_latency_s_;  // the engine's custom all-reduce, else the hardware's
  // The achieved bandwidth and per-call latency of the TP group's and the PP sends' links:
  // the GPU link, or the inter-node link when the group spans nodes.
  double tp_link_bytes_per_s_ = 0, pp_link_bytes_per_s_ = 0, pp_latency_s_ = 0;
  double gpu_link_bytes_per_s_ = 0;  // achieved, within a node
  // A TP group over more than one node: its nodes and GPUs in each (1 and TP within a node),
  // for the two-level all-reduce.
  double tp_nodes_ = 1, tp_gpus_per_node_ = 1;
  // GEMM kernel families: the layer matrices' (the checkpoint's or --weight-dtype's format) and the
  // attention projections' (16-bit where the checkpoint leaves attention unquantized), each with
  // the peak it computes at; GEMVs run on CUDA cores (the fp32 peak where known).
  GemmFamily weight_family_ = GemmFamily::Cublas, attention_family_ = GemmFamily::Cublas;
  bool block_scaled_ = false;  // FP8 weights with block scales
  // The engine's per-tensor FP8 GEMMs on CUDA cores up to this many tokens (0: none).
  double fp8_cuda_core_tokens_ = 0;
  double weight_peak_flops_per_s_ = 0, attention_peak_flops_per_s_ = 0;
  double gemv_flops_per_s_ = 0;
  // 16-bit (or fp32) tensor cores: cublas and marlin.
  double wide_peak_flops_per_s_ = 0;
  KernelClasses kernels_;  // the hardware's, scaled by the engine's kernel factors
  double layer_kernels_;   // kernels of one layer without attention, for the launch floor
};

}  // namespace servesim
