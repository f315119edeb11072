// `quant-gemm`: GEMV-sized GEMMs with int4 (weight-only) and fp8 weights on CUDA cores.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "validation/cpu_reference.h"
#include "validation/device_support.cuh"
#include "validation/harness_commands.cuh"
#include "validation/harness_record.h"
#include "validation/quant_gemm_kernels.cuh"

namespace servesim::validation {
namespace {

// int4 group scales are uniform in [-1/8, 1/8): dequantised weights stay within (-1, 1].
constexpr float kInt4ScaleRange = 0.125f;

// The bytes of one set of operands: activations, weights (codes), scales (int4) and output.
struct OperandBytes {
  std::size_t a = 0;
  std::size_t w = 0;
  std::size_t scales = 0;
  std::size_t c = 0;
  std::size_t total() const { return a + w + scales + c; }
};

OperandBytes operand_bytes(const QuantGemmShape& s) {
  const auto m = static_cast<std::size_t>(s.gemm.m);
  const auto n = static_cast<std::size_t>(s.gemm.n);
  const auto k = static_cast<std::size_t>(s.gemm.k);
  if (s.format == WeightFormat::Fp8) return {m * k, n * k, 0, 2 * m * n};
  return {2 * m * k, n * k / 2, 2 * n * (k / static_cast<std::size_t>(s.group_size)), 2 * m * n};
}

// `sets` copies of the operands of one shape, filled with random data on the device.
struct Operands {
  Operands(const QuantGemmShape& shape, std::size_t sets, std::uint64_t seed)
      : bytes(operand_bytes(shape)),
        a(sets * bytes.a),
        w(sets * bytes.w),
        scales(sets * bytes.scales),
        c(sets * bytes.c) {
    if (shape.format == WeightFormat::Fp8) {
      fill_random_bytes(a.data(), a.size_bytes(), seed, kFp8FiniteMask);
      fill_random_bytes(w.data(), w.size_bytes(), seed + 1, kFp8FiniteMask);
    } else {
      fill_random(a.data(), a.size_bytes() / 2, shape.gemm.dtype, seed);
      fill_random_bytes(w.data(), w.size_bytes(), seed + 1);
      fill_random(scales.data(), scales.size_bytes() / 2, shape.gemm.dtype, seed + 2,
                  kInt4ScaleRange);
    }
  }

  void launch(const QuantGemmShape& s, std::size_t set) const {
    const GemmShape& g = s.gemm;
    if (s.format == WeightFormat::Fp8) {
      launch_fp8_gemv({g.dtype, a.as<std::uint8_t>() + set * bytes.a,
                       w.as<std::uint8_t>() + set * bytes.w, kFp8TestActivationScale,
                       kFp8TestWeightScale, c.data() + set * bytes.c, g.m, g.n, g.k});
    } else {
      launch_int4_gemv({g.dtype, a.data() + set * bytes.a,
                        reinterpret_cast<const std::uint32_t*>(w.data() + set * bytes.w),
                        scales.data() + set * bytes.scales, c.data() + set * bytes.c, g.m, g.n, g.k,
                        s.group_size});
    }
  }

  OperandBytes bytes;
  DeviceBuffer a;
  DeviceBuffer w;
  DeviceBuffer scales;
  DeviceBuffer c;
};

std::string describe(const QuantGemmShape& s) {
  const GemmShape& g = s.gemm;
  return "quant-gemm " + std::string(weight_format_name(s.format)) + " " + g.op +
         " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
         " " + std::string(element_type_name(g.dtype));
}

// Runs the shape once on fresh random data and compares sampled outputs with the CPU reference.
void verify(const QuantGemmShape& shape) {
  const Operands operands(shape, 1, 0x5EED0ull + static_cast<std::uint64_t>(shape.gemm.m));
  const OperandBytes& bytes = operands.bytes;
  check(cudaMemset(operands.c.data(), 0xFF, bytes.c), "cudaMemset");  // NaN until written
  operands.launch(shape, 0);
  check(cudaDeviceSynchronize(), "quant-gemm kernel");
  const auto c_host = download<std::uint16_t>(operands.c.data(), bytes.c / 2);
  const GemmShape& g = shape.gemm;
  const std::vector<std::size_t> entries = sampled_entries(c_host.size());
  std::vector<float> expected;
  std::vector<float> actual;
  const auto n = static_cast<std::size_t>(g.n);
  if (shape.format == WeightFormat::Fp8) {
    const auto a_host = download<std::uint8_t>(operands.a.data(), bytes.a);
    const auto w_host = download<std::uint8_t>(operands.w.data(), bytes.w);
    for (const std::size_t e : entries) {
      expected.push_back(reference_fp8_gemm_entry(
          a_host, w_host, g.k, kFp8TestActivationScale, kFp8TestWeightScale,
          static_cast<std::int64_t>(e / n), static_cast<std::int64_t>(e % n)));
    }
  } else {
    const auto a_host = download<std::uint16_t>(operands.a.data(), bytes.a / 2);
    const auto w_host = download<std::uint32_t>(operands.w.data(), bytes.w / 4);
    const auto s_host = download<std::uint16_t>(operands.scales.data(), bytes.scales / 2);
    const Int4Weights weights{w_host, s_host, g.dtype, g.k, shape.group_size};
    for (const std::size_t e : entries) {
      expected.push_back(reference_int4_gemm_entry(
          a_host, weights, static_cast<std::int64_t>(e / n), static_cast<std::int64_t>(e % n)));
    }
  }
  for (const std::size_t e : entries)
    actual.push_back(bits_to_float(g.dtype, c_host[e]));
  const ToleranceReport report =
      compare_to_reference(expected, actual, relative_tolerance(g.dtype));
  if (!report.passed()) {
    throw HarnessFailure(describe(shape) + ": " + matrix_mismatch(report, entries, n));
  }
}

}  // namespace

std::vector<HarnessRecord> measure_quant_gemms(const HarnessOptions& options,
                                               const QuantGemmPlan& plan) {
  const std::string device = device_name();
  std::vector<HarnessRecord> records;
  for (const QuantGemmShape& shape : plan.gemms) {
    verify(shape);
    const std::size_t sets = rotation_sets(operand_bytes(shape).total());
    const Operands operands(shape, sets, 7);
    const std::vector<double> samples_s = time_launches(
        kWarmupCalls, options.repeats,
        [&](int call) { operands.launch(shape, static_cast<std::size_t>(call) % sets); });
    HarnessRecord record = make_record(device, shape, samples_s);
    record.measurement.model = plan.shard.model.name;
    record.measurement.tp = plan.shard.parallelism.tensor;
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace servesim::validation
