#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/hardware/execution_time_model.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/model/dtype.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"

namespace servesim {

struct RooflineOptions {
  Parallelism parallelism;
  DType weight_dtype = DType::BF16;
  DType kv_dtype = DType::BF16;
};

// Per-operator roofline: each operator takes max(FLOPs / achieved FLOP/s, bytes / achieved
// bandwidth) plus a fixed cost per kernel, with the achieved ceilings of its kernel class
// (GEMM, decode or prefill attention; elementwise kernels use the flat "efficiency" ones);
// collectives follow an alpha-beta model over the GPU link; host work is a per-iteration plus
// per-sequence overhead. All shard arithmetic is done once in the constructor so estimate() is a
// handful of multiplications.
class RooflineModel final : public IExecutionTimeModel {
 public:
  RooflineModel(const ModelSpec& model, const HardwareProfile& hardware,
                const RooflineOptions& options);
  IterationCost estimate(const BatchShape& shape) const override;
  // Decode attention is the only operator whose cost depends on the contexts: the rest is
  // priced once for the run.
  void estimate_decode_run(const BatchShape& first, std::span<double> durations_s) const override;

  // The numeric format the tensor cores run in: fp8 weights use fp8 units where the device
  // has them; other narrow formats are weight-only (dequantised to 16 bits).
  DType compute_dtype() const noexcept { return compute_dtype_; }
  // Peak FLOP/s over peak bandwidth for the compute format: the textbook balance point.
  double peak_balance_flops_per_byte() const noexcept;

 private:
  // A kernel's compute and memory times and its time (the larger plus its fixed costs).
  struct KernelTime {
    double compute_s = 0, memory_s = 0, time_s = 0;
  };
  // Fills `op` from totals for the whole stage under the ceilings of its kernel class at
  // `size` (see KernelCeilings); `kernels` counts its launches.
  void price(OperatorCost& op, double flops, double bytes, const KernelCeilings& ceilings,
             double size, double kernels, double masked_flops = 0,
             double idle_flops = 0) const noexcept;
  // Fills `op` with the work and time of a kernel timed as `t`.
  void record(OperatorCost& op, double flops, double bytes, const KernelTime& t,
              const KernelCeilings& ceilings, double size) const noexcept;
  void price_collective(OperatorCost& op, double calls, double bytes_per_rank,
                        double ring_factor) const noexcept;
  KernelTime kernel_time(double flops, double bytes, const KernelCeilings& ceilings, double size,
                         double kernels, double masked_flops, double idle_flops) const noexcept;
  // Decode attention of a batch of decoding sequences as a function of their summed
  // context: the one formula estimate() and estimate_decode_run both price it by, with what
  // does not depend on the context worked out once. It has no masked pairs and no idle tile
  // slots (decode_attention_work counts none), so those terms of KernelCeilings::compute_s
  // are left out: adding their zeros would not change a bit.
  struct DecodeAttention {
    double layers, q_width, kv_width, kv_bytes, sequence_bytes;
    double compute_flops_per_s, memory_bytes_per_s, compute_efficiency, memory_efficiency;
    double compute_scale, memory_scale, fixed_s;
    // Per layer.
    double flops(double context) const noexcept { return 4 * q_width * context; }
    double bytes(double context) const noexcept {
      return context * 2 * kv_width * kv_bytes + sequence_bytes;
    }
    // The whole stage.
    KernelTime time(double context) const noexcept {
      KernelTime t;
      t.compute_s =
          (layers * flops(context)) / compute_flops_per_s * compute_scale / compute_efficiency;
      t.memory_s =
          (layers * bytes(context)) / memory_bytes_per_s / memory_efficiency * memory_scale;
      t.time_s = std::max(t.compute_s, t.memory_s) + fixed_s;
      return t;
    }
  };
  DecodeAttention decode_attention(std::int64_t sequences) const noexcept;
  // The total is summed as (every operator but decode attention, in order) + decode
  // attention, so that estimate_decode_run, which prices only decode attention again for
  // each iteration of a run, reproduces it exactly.
  static double total_without_decode_attention(const IterationCost& cost) noexcept;

  HardwareProfile hardware_;
  KernelCeilings elementwise_;  // norms, activations, residual adds: flat ceilings
  RooflineOptions options_;
  DType compute_dtype_;
  bool moe_;
  bool gated_;
  // Per-GPU shard dimensions as doubles, ready for the arithmetic.
  double layers_, hidden_, heads_, kv_heads_, head_dim_, intermediate_, vocab_;
  double experts_, experts_per_token_;
  double weight_bytes_, other_weight_bytes_, activation_bytes_, kv_bytes_;
  double compute_flops_per_s_, memory_bytes_per_s_;
};

}  // namespace servesim
