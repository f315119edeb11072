// `gemm`: cuBLAS GEMMs over the layer shapes of a model's TP shard.
#include <cstdint>
#include <vector>

#include "validation/device_support.cuh"
#include "validation/gemm_runner.cuh"
#include "validation/harness_commands.cuh"

namespace servesim::validation {

namespace {

// cuBLAS's default workspace on Hopper (32 MiB; 4 MiB before it), given explicitly for the
// back-to-back timings so that a graph capture finds it allocated and the kernel choices are
// those of the default stream's calls.
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

}  // namespace

std::vector<Measurement> measure_gemms(const HarnessOptions& options, const GemmPlan& plan) {
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
    std::vector<double> samples_s;
    if (per_call) {
      samples_s = time_launches(kWarmupCalls, options.repeats, launch);
    } else {
      // Verified on the default stream above; timed on a stream of its own, which does not wait
      // for the default stream's fills.
      check(cudaDeviceSynchronize(), "random fills");
      runner.use_stream(stream.get(), workspace.data(), workspace.size_bytes());
      samples_s = time_back_to_back(options.timing, stream.get(), kWarmupCalls, options.repeats,
                                    options.calls, launch);
      runner.use_stream(nullptr, workspace.data(), workspace.size_bytes());
    }
    Measurement m = make_measurement(device, shape, samples_s);
    set_timing(m, options.timing, options.calls);
    m.model = plan.shard.model.name;
    m.tp = plan.shard.parallelism.tensor;
    measurements.push_back(std::move(m));
  }
  return measurements;
}

}  // namespace servesim::validation
