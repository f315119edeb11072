#pragma once

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/hardware/gemm_kernels.h"
#include "sim/hardware/kernel_work.h"
#include "sim/model/dtype.h"

namespace servesim {

// Achieved fractions of the datasheet ceilings: real kernels never reach peak, and how far
// they stay below it is what calibration measures.
struct Efficiency {
  double gemm_compute = 0.7;       // large dense matrix multiplies
  double attention_compute = 0.5;  // fused attention kernels (FlashAttention-style)
  double memory_bandwidth = 0.75;  // streaming reads and writes of HBM
  double gpu_link = 0.7;           // collective bus bandwidth over the GPU link
  double host_link = 0.8;          // copies between device and host memory
};

// Fixed device-side costs the roofline misses. The host's costs (scheduling, input
// preparation, sampling) belong to the serving engine: see sim/engine/engine_costs.h.
struct Overheads {
  double kernel_launch_s = 2e-6;       // per kernel: launch gap and tail effects on the GPU
  double collective_latency_s = 3e-5;  // per collective call (the alpha of alpha-beta)
};

// Achieved ceilings of one class of kernels (GEMMs, decode attention, prefill attention).
// Small kernels leave SMs idle, so the achieved fraction of a ceiling rises with the kernel's
// size (tokens of a GEMM, sequences of a decode attention, chunk tokens of a prefill):
// efficiency(size) = efficiency * size / (size + half_size); half_size 0 is a flat ceiling.
// A kernel then takes max(compute time, memory time) plus a fixed per-kernel cost.
// Attention kernels may also spend time on the query-key pairs the causal mask hides
// ("masked" work): masked_pair_weight is their cost relative to a computed pair (0: the
// kernel skips masked tiles; 1: it computes the full rectangle). GEMMs compute whole output
// tiles in waves of one tile per SM, so the padding of the last tile row and column and the
// idle SMs of the last wave ("idle" work, see gemm_idle_flops in kernel_work.h) cost
// quantization_weight times a useful FLOP (0: no quantization effect; 1: every idle slot
// costs in full; libraries that pick tiles per shape recover part of it).
struct KernelCeilings {
  double compute_efficiency = 0.7;
  double compute_half_size = 0;
  double memory_efficiency = 0.75;
  double memory_half_size = 0;
  double fixed_s = 2e-6;  // per kernel: launch gap, prologue and tail
  double masked_pair_weight = 0;
  double quantization_weight = 0;  // GEMMs: cost of idle tile slots per useful FLOP
  double tile_m = 128;             // GEMMs: output tile rows (tokens) of one SM's work
  double tile_n = 128;             // GEMMs: output tile columns

  // Scale a time at the datasheet peak to the achieved ceiling at `size` (>= 1).
  // `masked_peak_s` and `idle_peak_s` are the masked and idle work at the peak.
  double compute_s(double peak_s, double size, double masked_peak_s = 0,
                   double idle_peak_s = 0) const noexcept {
    return (peak_s * (1 + compute_half_size / std::max(size, 1.0)) +
            masked_pair_weight * masked_peak_s + quantization_weight * idle_peak_s) /
           compute_efficiency;
  }
  double memory_s(double peak_s, double size) const noexcept {
    return peak_s / memory_efficiency * (1 + memory_half_size / std::max(size, 1.0));
  }
};

// The GEMMs of a decoder layer, which may have ceilings of their own: measured kernels of
// the same shape run at different speeds per operator (on H100, the down projection, whose
// input is the gated activation, sustains a higher fraction of the peak than the others).
enum class GemmOperator { Qkv, Out, MlpUp, MlpDown };
inline constexpr std::array<GemmOperator, 4> kGemmOperators{
    GemmOperator::Qkv, GemmOperator::Out, GemmOperator::MlpUp, GemmOperator::MlpDown};
// "qkv", "o", "mlp_up", "mlp_down": the names of measurement records' `operator`.
std::string_view gemm_operator_name(GemmOperator op) noexcept;

// Calibrated classes. A profile without a "kernels" section derives them from "efficiency"
// and "overheads" (flat ceilings), which is the uncalibrated roofline. A GEMM operator
// without its own ceilings ("gemm_qkv", ...) uses "gemm", as does the LM head.
struct KernelClasses {
  KernelCeilings gemm;
  std::array<std::optional<KernelCeilings>, 4> gemm_operators;
  KernelCeilings decode_attention;
  // Decode attention over an 8-bit (FP8) KV cache where the profile measured it apart: the
  // kernels that read it (FlashAttention-3 with FP8 descaling, FlashInfer, XQA) differ from
  // the 16-bit ones in more than their bytes. Without it, decode_attention.
  std::optional<KernelCeilings> decode_attention_fp8_kv;
  // MLA's absorbed decode (FlashMLA, TensorRT-LLM's MLA kernels), a kernel of its own: every
  // query head against one shared latent per token. Used for MLA models, whatever the KV
  // format, where the profile measured it. Without it, decode_attention_for(kv).
  std::optional<KernelCeilings> decode_attention_mla;
  // Decode attention of sliding-window and chunked layers (their keys end at the window), where
  // the profile measured it apart: those layers are then priced on their own, not summed with
  // the full layers into one kernel time. Without it, one class serves both.
  std::optional<KernelCeilings> decode_attention_window;
  KernelCeilings prefill_attention;

  const KernelCeilings& gemm_for(GemmOperator op) const noexcept {
    const auto& own = gemm_operators[static_cast<std::size_t>(op)];
    return own ? *own : gemm;
  }
  const KernelCeilings& decode_attention_for(DType kv, bool mla = false) const noexcept {
    if (mla && decode_attention_mla) return *decode_attention_mla;
    return (kv == DType::FP8 || kv == DType::INT8) && decode_attention_fp8_kv
               ? *decode_attention_fp8_kv
               : decode_attention;
  }
};

// One accelerator, as loaded from hw_profiles/<name>.json. All rates are SI decimal.
struct HardwareProfile {
  std::string name;
  std::string description;
  std::string source;  // file it was read from

  double memory_capacity_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;
  // Dense (no sparsity) peak per numeric format; 0 where the device has no such unit.
  std::array<double, kDTypeCount> peak_flops_per_s{};
  double gpu_link_bandwidth_bytes_per_s = 0;  // per direction, GPU to GPU
  // Node topology: the GPUs a gpu link joins (the NVLink domain; 0 = unknown, every group
  // within one node), and each GPU's link to other nodes (InfiniBand or RoCE NIC), per
  // direction, with its per-message latency. Groups spanning nodes cross that link.
  double gpus_per_node = 0;
  double inter_node_bandwidth_bytes_per_s = 0;
  double inter_node_latency_s = 0;
  double host_link_bandwidth_bytes_per_s = 0;  // per direction, GPU to host
  double runtime_reserved_bytes = 0;           // CUDA context, library workspaces, graphs: never KV
  // The total memory CUDA reports (cudaMemGetInfo; what vLLM logs as total_gpu_memory), which
  // is below nvidia-smi's memory.total by what the driver keeps; 0 when not known, then taken
  // as memory_capacity_bytes.
  double memory_visible_bytes = 0;
  double visible_memory_bytes() const {
    return memory_visible_bytes > 0 ? memory_visible_bytes : memory_capacity_bytes;
  }
  // Streaming multiprocessors (datasheet): GEMM tiles run in waves of one per SM. 0 when
  // unknown, which turns the GEMM wave quantization term off.
  double sm_count = 0;
  std::optional<double> price_per_gpu_hour_usd;
  // The software platform its serving engines run on: "cuda" (NVIDIA) or "rocm" (AMD).
  std::string platform = "cuda";
  // The GPU's architecture ("ampere", "ada", "hopper", "blackwell", "cdna3", "cdna4"): the
  // GPU class error bands are kept by (docs/validation.md). Empty: the profile's own class.
  std::string architecture;
  // architecture, or the profile's name where none is given.
  std::string gpu_class() const { return architecture.empty() ? name : architecture; }
  Efficiency efficiency;
  Overheads overheads;
  KernelClasses kernels;
  // The GEMM kernel family per weight format ("gemm_kernels": {"fp8": "marlin"}); a format
  // left out takes the default of gemm_family_for.
  std::array<std::optional<GemmFamily>, kDTypeCount> gemm_kernels{};
  // What a calibrated profile was fitted from, its residuals and hold-out errors: free-form
  // metadata written by `servesim calibrate` (null when absent). Its numbers need no source.
  nlohmann::json calibration;
  // Where each number comes from, keyed by its dotted path in the file.
  std::map<std::string, std::string> sources;

  double peak_flops(DType dtype) const { return peak_flops_per_s[static_cast<std::size_t>(dtype)]; }
  bool supports(DType dtype) const { return peak_flops(dtype) > 0; }
};

// The tiling a GEMM class prices quantization with on this device.
inline GemmTiling gemm_tiling(const HardwareProfile& profile, const KernelCeilings& k) noexcept {
  return {k.tile_m, k.tile_n, profile.sm_count};
}

// The kernel family that runs GEMMs whose weights are `weights` on this device: the profile's
// gemm_kernels entry, else 16-bit formats cublas, fp8 cutlass_fp8 where the device has FP8
// tensor cores, fp4 cutlass_fp4 where it has FP4 ones, and marlin (weight-only) otherwise.
// `fp4_checkpoint`: the model's own weights are FP4 (MXFP4, NVFP4), which weight-only kernels
// run on any device; FP4 weights of any other model need FP4 tensor cores or a family named in
// gemm_kernels.fp4, else InputError naming the profile's file and peak_flops_per_s.fp4.
GemmFamily gemm_family_for(const HardwareProfile& profile, DType weights, bool fp4_checkpoint);

HardwareProfile load_hardware_file(const std::filesystem::path& path);
HardwareProfile hardware_from_json(const nlohmann::json& document, const std::string& source_name);
nlohmann::json hardware_to_json(const HardwareProfile& profile);

// Alpha-beta time of one ring all-reduce of `bytes` over `ranks` GPUs of one node: each rank
// sends and receives 2 (ranks - 1) / ranks of the buffer over its link.
inline double all_reduce_time_s(const HardwareProfile& profile, double bytes, double ranks) {
  if (ranks <= 1) return 0;
  const double link = profile.gpu_link_bandwidth_bytes_per_s * profile.efficiency.gpu_link;
  return profile.overheads.collective_latency_s + 2 * (ranks - 1) / ranks * bytes / link;
}

}  // namespace servesim
