#include "validation/measurement.h"

#include <stdexcept>
#include <utility>

#include "validation/kernel_info.h"
#include "validation/timing_stats.h"

namespace servesim::validation {
namespace {

Measurement timed(std::string device_name, MeasurementKind kind,
                  std::span<const double> samples_s) {
  const TimingStats stats = compute_timing_stats(samples_s);
  Measurement m;
  m.kind = kind;
  m.device_name = std::move(device_name);
  m.repeats = static_cast<std::int64_t>(samples_s.size());
  m.median_s = stats.median_s;
  m.min_s = stats.min_s;
  m.max_s = stats.max_s;
  return m;
}

DType dtype_of(ElementType type) {
  return type == ElementType::FP16 ? DType::FP16 : DType::BF16;
}

void set_heads(Measurement& m, const HeadShape& heads) {
  m.num_heads = heads.num_heads;
  m.num_kv_heads = heads.num_kv_heads;
  m.head_dim = heads.head_dim;
}

}  // namespace

double achieved_bandwidth_bytes_per_s(std::uint64_t bytes_moved, double elapsed_s) {
  if (!(elapsed_s > 0.0)) {
    throw std::invalid_argument("achieved_bandwidth_bytes_per_s: elapsed time must be > 0");
  }
  return static_cast<double>(bytes_moved) / elapsed_s;
}

Measurement make_copy_measurement(std::string device_name, MeasurementKind kind,
                                  std::uint64_t size_bytes, std::span<const double> samples_s) {
  if (kind != MeasurementKind::MemcpyD2D && kind != MeasurementKind::CopyKernelD2D) {
    throw std::invalid_argument("make_copy_measurement: not a copy kind");
  }
  Measurement m = timed(std::move(device_name), kind, samples_s);
  m.size_bytes = static_cast<double>(size_bytes);
  m.bandwidth_bytes_per_s = achieved_bandwidth_bytes_per_s(2 * size_bytes, m.median_s);
  return m;
}

Measurement make_copy_measurement(std::string device_name, std::string_view kind_name,
                                  std::uint64_t size_bytes, std::span<const double> samples_s) {
  for (const MeasurementKind kind : {MeasurementKind::MemcpyD2D, MeasurementKind::CopyKernelD2D}) {
    if (kind_name == measurement_kind_name(kind)) {
      return make_copy_measurement(std::move(device_name), kind, size_bytes, samples_s);
    }
  }
  throw std::invalid_argument("make_copy_measurement: unknown copy kind '" +
                              std::string(kind_name) + "'");
}

Measurement make_measurement(std::string device_name, const GemmShape& gemm,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), MeasurementKind::Gemm, samples_s);
  m.gemm_operator = gemm.op;
  m.m = gemm.m;
  m.n = gemm.n;
  m.k = gemm.k;
  m.dtype = dtype_of(gemm.dtype);
  if (gemm.fp8) {
    m.dtype = DType::FP8;
    m.activation_dtype = DType::FP8;
    m.output_dtype = dtype_of(gemm.dtype);
    const KernelInfo kernel = cublaslt_fp8_kernel();
    m.kernel =
        Measurement::Kernel{kernel.name, kernel.kind, kernel.cores,
                            static_cast<double>(kernel.tile_m), static_cast<double>(kernel.tile_n)};
  }
  return m;
}

void set_timing(Measurement& m, TimingMode mode, int calls_per_sample) {
  m.timing = timing_mode_name(mode);
  m.calls_per_sample = mode == TimingMode::PerCall ? 0 : calls_per_sample;
}

Measurement make_measurement(std::string device_name, const DecodeAttentionShape& attention,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), MeasurementKind::DecodeAttention, samples_s);
  m.batch = attention.batch;
  m.context_tokens = attention.context_tokens;
  set_heads(m, attention.heads);
  m.block_size = attention.block_size;
  m.dtype = dtype_of(attention.dtype);
  return m;
}

Measurement make_measurement(std::string device_name, const PrefillAttentionShape& attention,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), MeasurementKind::PrefillAttention, samples_s);
  m.batch = attention.batch;
  m.chunk_tokens = attention.chunk_tokens;
  m.context_tokens = attention.context_tokens;
  set_heads(m, attention.heads);
  m.dtype = dtype_of(attention.dtype);
  return m;
}

Measurement make_measurement(std::string device_name, const IterationRecord& iteration,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), MeasurementKind::Iteration, samples_s);
  m.pp = iteration.pp;
  m.shape = iteration.shape;
  m.predicted_s = iteration.predicted_s;
  return m;
}

void write_measurements_json(std::ostream& out, std::string_view device_name,
                             std::span<const Measurement> measurements) {
  servesim::write_measurements_json(out, device_name, measurements);
}

}  // namespace servesim::validation
