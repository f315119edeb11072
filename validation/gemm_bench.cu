// `gemm`: cuBLAS GEMMs over the layer shapes of a model's TP shard; with --dtype fp8, cuBLASLt
// FP8 GEMMs over the same layer shapes.
#include <cstdint>
#include <functional>
#include <iostream>
#include <utility>
#include <vector>

#include "validation/device_support.cuh"
#include "validation/fp8_gemm_runner.cuh"
#include "validation/gemm_runner.cuh"
#include "validation/harness_commands.cuh"
#include "validation/quantized_formats.h"

namespace servesim::validation {

namespace {

// cuBLAS's default workspace on Hopper (32 MiB; 4 MiB before it), given explicitly for the
// back-to-back timings so that a graph capture finds it allocated and the kernel choices are
// those of the default stream's calls. cuBLASLt has no workspace of its own: FP8 GEMMs get one
// of this size in every timing, and their algorithm is chosen for it.
constexpr std::size_t kCublasWorkspaceBytes = 32ull << 20;

// A stream of its own for the back-to-back timings (a graph cannot be captured on the legacy
// default stream).
class TimingStream {
 public:
  TimingStream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream"); }
  ~TimingStream() { cudaStreamDestroy(stream_); }
  TimingStream(const TimingStream&) = delete;
  TimingStream& operator=(const TimingStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Times `launch` as options.timing says: one call at a time on the default stream, or back to
// back on `stream` once the default stream's random fills are done (a stream of its own does
// not wait for them).
std::vector<double> time_gemm(const HarnessOptions& options, cudaStream_t stream,
                              const std::function<void(int call)>& launch) {
  if (options.timing == TimingMode::PerCall) {
    return time_launches(kWarmupCalls, options.repeats, launch);
  }
  check(cudaDeviceSynchronize(), "random fills");
  return time_back_to_back(options.timing, stream, kWarmupCalls, options.repeats, options.calls,
                           launch);
}

Measurement finish(const HarnessOptions& options, const GemmPlan& plan, const std::string& device,
                   const GemmShape& shape, const std::vector<double>& samples_s) {
  Measurement m = make_measurement(device, shape, samples_s);
  set_timing(m, options.timing, options.calls);
  m.model = plan.shard.model.name;
  m.tp = plan.shard.parallelism.tensor;
  return m;
}

std::vector<Measurement> measure_wide_gemms(const HarnessOptions& options, const GemmPlan& plan) {
  GemmRunner runner;
  const std::string device = device_name();
  const bool per_call = options.timing == TimingMode::PerCall;
  TimingStream stream;
  DeviceBuffer workspace(per_call ? 0 : kCublasWorkspaceBytes);
  std::vector<Measurement> measurements;
  for (const GemmShape& shape : plan.gemms) {
    verify_gemm(runner, shape);
    const auto a_count = static_cast<std::size_t>(shape.m * shape.k);
    const auto w_count = static_cast<std::size_t>(shape.n * shape.k);
    const auto c_count = static_cast<std::size_t>(shape.m * shape.n);
    const std::size_t sets = rotation_sets(2 * (a_count + w_count + c_count));
    DeviceBuffer a(sets * a_count * 2);
    DeviceBuffer w(sets * w_count * 2);
    DeviceBuffer c(sets * c_count * 2);
    fill_random(a.data(), sets * a_count, shape.dtype, 1);
    fill_random(w.data(), sets * w_count, shape.dtype, 2);
    const auto launch = [&](int call) {
      const std::size_t set = static_cast<std::size_t>(call) % sets;
      runner.run(shape, a.data() + set * a_count * 2, w.data() + set * w_count * 2,
                 c.data() + set * c_count * 2);
    };
    // Verified on the default stream above; timed back to back on a stream of its own.
    if (!per_call) runner.use_stream(stream.get(), workspace.data(), workspace.size_bytes());
    const std::vector<double> samples_s = time_gemm(options, stream.get(), launch);
    if (!per_call) runner.use_stream(nullptr, workspace.data(), workspace.size_bytes());
    measurements.push_back(finish(options, plan, device, shape, samples_s));
  }
  return measurements;
}

// The same loop for FP8 (fp8_gemm_runner.cuh): e4m3 operands from random bytes, the per-tensor
// scales in device memory, the algorithm chosen once per shape before anything is timed.
std::vector<Measurement> measure_fp8_gemms(const HarnessOptions& options, const GemmPlan& plan) {
  const LtHandle handle;
  const std::string device = device_name();
  TimingStream stream;
  DeviceBuffer workspace(kCublasWorkspaceBytes);
  const DeviceBuffer scales =
      upload(std::vector<float>{kFp8TestActivationScale, kFp8TestWeightScale});
  const float* activation_scale = scales.as<float>();
  const float* weight_scale = scales.as<float>() + 1;
  std::vector<Measurement> measurements;
  for (const GemmShape& planned : plan.gemms) {
    const Fp8Matmul matmul(handle.get(), planned, activation_scale, weight_scale,
                           workspace.size_bytes());
    std::cerr << "servesim-harness: " << describe_choice(planned, matmul) << '\n';
    GemmShape shape = planned;
    shape.m = matmul.rows();  // the rows computed (padded where cuBLASLt needed it)
    verify_fp8_gemm(matmul, shape, workspace.data());
    const auto a_bytes = static_cast<std::size_t>(shape.m * shape.k);
    const auto w_bytes = static_cast<std::size_t>(shape.n * shape.k);
    const auto c_bytes = static_cast<std::size_t>(shape.m * shape.n * 2);
    const std::size_t sets = rotation_sets(a_bytes + w_bytes + c_bytes);
    DeviceBuffer a(sets * a_bytes);
    DeviceBuffer w(sets * w_bytes);
    DeviceBuffer c(sets * c_bytes);
    fill_random_bytes(a.data(), a.size_bytes(), 1, kFp8FiniteMask);
    fill_random_bytes(w.data(), w.size_bytes(), 2, kFp8FiniteMask);
    const bool per_call = options.timing == TimingMode::PerCall;
    const auto launch = [&](int call) {
      const std::size_t set = static_cast<std::size_t>(call) % sets;
      matmul.run(a.data() + set * a_bytes, w.data() + set * w_bytes, c.data() + set * c_bytes,
                 workspace.data(), per_call ? nullptr : stream.get());
    };
    const std::vector<double> samples_s = time_gemm(options, stream.get(), launch);
    measurements.push_back(finish(options, plan, device, shape, samples_s));
  }
  return measurements;
}

}  // namespace

std::vector<Measurement> measure_gemms(const HarnessOptions& options, const GemmPlan& plan) {
  return options.fp8 ? measure_fp8_gemms(options, plan) : measure_wide_gemms(options, plan);
}

}  // namespace servesim::validation
