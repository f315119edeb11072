#include "sim/calibration/prediction.h"

#include <cmath>

#include "sim/core/error.h"
#include "sim/hardware/gemm_kernels.h"
#include "sim/hardware/gemm_peaks.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/hardware/kernel_work.h"

namespace servesim {
namespace {

double activation_bytes(DType dtype) {
  return dtype == DType::FP32 ? 4.0 : 2.0;
}

bool is_wide(DType dtype) {
  return dtype == DType::FP16 || dtype == DType::BF16 || dtype == DType::FP32;
}

// The 16- or 32-bit format a GEMM record's wide side computes in: its weights' when they are
// wide, else its activations' (or output's) when those are 16-bit, else bf16.
DType wide_dtype(const Measurement& m) {
  if (is_wide(m.dtype)) return m.dtype;
  for (const auto& given : {m.activation_dtype, m.output_dtype}) {
    if (given && is_wide(*given) && *given != DType::FP32) return *given;
  }
  return DType::BF16;
}

// The family the simulator runs the record's weights with on this device (gemm_family_for):
// narrow weights against 16-bit activations are dequantised in the kernel (marlin).
GemmFamily record_family(const Measurement& m, const HardwareProfile& profile) {
  if (!is_wide(m.dtype) && m.activation_dtype && is_wide(*m.activation_dtype)) {
    return GemmFamily::Marlin;
  }
  // A measured FP4 record ran, so weight-only FP4 is allowed where the device lacks FP4 cores.
  return gemm_family_for(profile, m.dtype, /*fp4_checkpoint=*/true);
}

// Weight bytes of n x k elements of the record's format, with int4's 16-bit group scales.
double weight_bytes(const Measurement& m) {
  const double scales = m.group_size > 0 ? 2.0 / static_cast<double>(m.group_size) : 0.0;
  return bytes_per_element(m.dtype) + scales;
}

KernelSample gemm_sample(const Measurement& m, const HardwareProfile& profile,
                         const KernelCeilings& ceilings) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const GemmFamily family = record_family(m, profile);
  const GemmPeaks peaks = gemm_peaks(profile, family, wide_dtype(m));
  GemmKernel kernel;
  if (m.kernel && m.kernel->kind == "gemv") {
    // A CUDA-core GEMV (the harness's quant-gemm kernels, TensorRT-LLM's cudaCoreGemm).
    kernel.kind = GemmKernelKind::Gemv;
    kernel.family = family;
    kernel.fitted = false;
  } else {
    const bool block_scaled = m.dtype == DType::FP8 && m.group_size > 0;
    kernel =
        choose_gemm_kernel(family, block_scaled, d(m.m), d(m.n), gemm_tiling(profile, ceilings), 0);
  }
  const KernelWork work =
      gemm_work(d(m.m), d(m.n), d(m.k), weight_bytes(m), activation_bytes(m.dtype));
  const double idle = kernel_idle_flops(kernel, d(m.m), d(m.n), d(m.k), profile.sm_count);
  const GemmComputeWork w = gemm_compute_work(kernel, work.flops, idle, d(m.m),
                                              peaks.tensor_flops_per_s, peaks.gemv_flops_per_s);
  KernelSample s;
  s.compute_peak_s = w.peak_s;
  s.compute_size = w.size;
  s.idle_peak_s = w.idle_peak_s;
  s.memory_peak_s = work.bytes / profile.memory_bandwidth_bytes_per_s;
  s.size = d(m.m);
  return s;
}

// The grouped GEMM over the rows and experts the record's routing gave, priced as the roofline
// prices its MoE layers' (roofline_moe.cpp): every slot of the padded row tiles at the class's
// efficiency, the touched experts' weights read once, the tokens' activations in (mlp_up) or
// out (mlp_down) and the routed rows' on the other side.
KernelSample moe_gemm_sample(const Measurement& m, const HardwareProfile& profile) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const GemmFamily family = record_family(m, profile);
  const GemmPeaks peaks = gemm_peaks(profile, family, wide_dtype(m));
  const bool block_scaled = m.dtype == DType::FP8 && m.group_size > 0;
  GemmKernel kernel;
  kernel.kind = GemmKernelKind::Grouped;
  kernel.family = family;
  kernel.fitted = false;
  kernel.tile_m =
      m.kernel && m.kernel->tile_m > 0
          ? m.kernel->tile_m
          : grouped_block_m(family, block_scaled, d(m.tokens), d(m.experts), d(m.top_k));
  kernel.tile_n = m.kernel && m.kernel->tile_n > 0 ? m.kernel->tile_n : kGroupedTileN;
  const double rows = d(m.routed_rows);
  const double n = d(m.n), k = d(m.k);
  const double row_tiles = std::ceil(d(m.padded_rows) / kernel.tile_m);
  const double flops = 2 * rows * n * k;
  const double idle = grouped_idle_flops(kernel, row_tiles, rows, n, k, profile.sm_count);
  const GemmComputeWork w = gemm_compute_work(kernel, flops, idle, rows, peaks.tensor_flops_per_s,
                                              peaks.gemv_flops_per_s);
  const double a = activation_bytes(m.dtype);
  const double tokens_side = d(m.tokens) * (m.gemm_operator == "mlp_up" ? k : n);
  const double rows_side = rows * (m.gemm_operator == "mlp_up" ? n : k);
  KernelSample s;
  s.compute_peak_s = w.peak_s;
  s.compute_size = w.size;
  s.idle_peak_s = w.idle_peak_s;
  s.memory_peak_s =
      (d(m.experts_touched) * n * k * weight_bytes(m) + (tokens_side + rows_side) * a) /
      profile.memory_bandwidth_bytes_per_s;
  s.size = d(m.tokens);
  return s;
}

}  // namespace

bool is_kernel_record(const Measurement& m) noexcept {
  return m.kind == MeasurementKind::Gemm || m.kind == MeasurementKind::MoeGemm ||
         m.kind == MeasurementKind::DecodeAttention || m.kind == MeasurementKind::PrefillAttention;
}

std::optional<GemmOperator> gemm_operator_of(const Measurement& m) noexcept {
  if (m.kind != MeasurementKind::Gemm && m.kind != MeasurementKind::MoeGemm) return std::nullopt;
  for (const GemmOperator op : kGemmOperators) {
    if (m.gemm_operator == gemm_operator_name(op)) return op;
  }
  return std::nullopt;
}

const KernelCeilings& kernel_class(const Measurement& m, const HardwareProfile& profile) {
  if (const auto op = gemm_operator_of(m)) return profile.kernels.gemm_for(*op);
  switch (m.kind) {
    case MeasurementKind::DecodeAttention:
      return profile.kernels.decode_attention;
    case MeasurementKind::PrefillAttention:
      return profile.kernels.prefill_attention;
    default:
      return profile.kernels.gemm;
  }
}

KernelSample kernel_sample(const Measurement& m, const HardwareProfile& profile,
                           const KernelCeilings* ceilings) {
  if (m.kind == MeasurementKind::Gemm) {
    return gemm_sample(m, profile, ceilings ? *ceilings : kernel_class(m, profile));
  }
  if (m.kind == MeasurementKind::MoeGemm) return moe_gemm_sample(m, profile);
  const double peak = peak_flops_or_bf16(profile, m.dtype);
  const double a = activation_bytes(m.dtype);
  const double element = bytes_per_element(m.dtype);
  KernelWork work;
  double size = 1;
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double q_width = d(m.num_heads * m.head_dim);
  const double kv_width = d(m.num_kv_heads * m.head_dim);
  const double batch = d(m.batch);
  switch (m.kind) {
    case MeasurementKind::DecodeAttention:
      work =
          decode_attention_work(batch, batch * d(m.context_tokens), q_width, kv_width, a, element);
      size = batch;
      break;
    case MeasurementKind::PrefillAttention: {
      const double c = d(m.chunk_tokens);
      const double p = d(m.context_tokens);
      work = prefill_attention_work(batch * c, batch * (p + c), batch * (c * p + c * (c + 1) / 2),
                                    batch * c * (c - 1) / 2, q_width, kv_width, a, element);
      size = c;
      break;
    }
    default:
      throw InvariantError("kernel_sample: " + m.where + " is not a kernel record");
  }
  KernelSample s;
  s.compute_peak_s = work.flops / peak;
  s.memory_peak_s = work.bytes / profile.memory_bandwidth_bytes_per_s;
  s.size = size;
  s.compute_size = size;
  s.masked_peak_s = work.masked_flops / peak;
  s.idle_peak_s = work.idle_flops / peak;
  return s;
}

double predict_seconds(const Measurement& m, const HardwareProfile& profile,
                       const ModelResolver* models, const EngineCosts* engine) {
  if (is_kernel_record(m)) return kernel_sample(m, profile).seconds(kernel_class(m, profile));
  switch (m.kind) {
    case MeasurementKind::MemcpyD2D:
    case MeasurementKind::CopyKernelD2D:
      // Read and write: 2 x size bytes through HBM.
      return 2 * m.size_bytes /
                 (profile.memory_bandwidth_bytes_per_s * profile.efficiency.memory_bandwidth) +
             profile.overheads.kernel_launch_s;
    case MeasurementKind::AllReduce:
      return all_reduce_time_s(profile, m.size_bytes, static_cast<double>(m.ranks));
    case MeasurementKind::HostOverhead: {
      if (engine == nullptr) {
        throw InputError(m.where,
                         "a host_overhead record times the engine's host work: give "
                         "an engine (--engine) to predict it");
      }
      const EngineHostCosts& host = engine->host;
      return host.schedule_s + host.step_s + host.per_sequence_s * static_cast<double>(m.batch);
    }
    case MeasurementKind::Iteration: {
      if (models == nullptr) {
        throw InputError(m.where, "an iteration record needs its model to be predicted");
      }
      const ModelSpec model = (*models)(m.model);
      RooflineOptions options;
      options.parallelism = {m.tp, m.pp};
      options.weight_dtype = model.native_dtype;
      options.kv_dtype = model.native_dtype;
      return RooflineModel(model, profile, options).estimate(m.shape).total_time_s;
    }
    default:
      throw InvariantError("predict_seconds: unhandled kind at " + m.where);
  }
}

}  // namespace servesim
