#include "sim/calibration/prediction.h"

#include "sim/core/error.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/hardware/kernel_work.h"

namespace servesim {
namespace {

double peak_flops_for(const HardwareProfile& profile, DType dtype) {
  return profile.supports(dtype) ? profile.peak_flops(dtype) : profile.peak_flops(DType::BF16);
}

double activation_bytes(DType dtype) {
  return dtype == DType::FP32 ? 4.0 : 2.0;
}

}  // namespace

bool is_kernel_record(const Measurement& m) noexcept {
  return m.kind == MeasurementKind::Gemm || m.kind == MeasurementKind::DecodeAttention ||
         m.kind == MeasurementKind::PrefillAttention;
}

std::optional<GemmOperator> gemm_operator_of(const Measurement& m) noexcept {
  if (m.kind != MeasurementKind::Gemm) return std::nullopt;
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
  const double peak = peak_flops_for(profile, m.dtype);
  const double bandwidth = profile.memory_bandwidth_bytes_per_s;
  const double a = activation_bytes(m.dtype);
  const double element = bytes_per_element(m.dtype);
  KernelWork work;
  double size = 1;
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double q_width = d(m.num_heads * m.head_dim);
  const double kv_width = d(m.num_kv_heads * m.head_dim);
  const double batch = d(m.batch);
  switch (m.kind) {
    case MeasurementKind::Gemm:
      work = gemm_work(d(m.m), d(m.n), d(m.k), element, a,
                       gemm_tiling(profile, ceilings ? *ceilings : kernel_class(m, profile)));
      size = d(m.m);
      break;
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
  return {work.flops / peak, work.bytes / bandwidth, size, work.masked_flops / peak,
          work.idle_flops / peak};
}

double predict_seconds(const Measurement& m, const HardwareProfile& profile,
                       const ModelResolver* models, const EngineCosts* engine) {
  if (is_kernel_record(m)) {
    const KernelSample s = kernel_sample(m, profile);
    return kernel_class(m, profile)
        .kernel_s(s.compute_peak_s, s.memory_peak_s, s.size, s.masked_peak_s, s.idle_peak_s);
  }
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
