// `gemm`: cuBLAS GEMMs over the layer shapes of a model's TP shard.
#include <cstdint>
#include <vector>

#include "validation/device_support.cuh"
#include "validation/gemm_runner.cuh"
#include "validation/harness_commands.cuh"

namespace servesim::validation {

std::vector<Measurement> measure_gemms(const HarnessOptions& options, const GemmPlan& plan) {
  const GemmRunner runner;
  const std::string device = device_name();
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
    const std::vector<double> samples_s =
        time_launches(kWarmupCalls, options.repeats, [&](int call) {
          const std::size_t set = static_cast<std::size_t>(call) % sets;
          runner.run(shape, a.data() + set * a_count * 2, w.data() + set * w_count * 2,
                     c.data() + set * c_count * 2);
        });
    Measurement m = make_measurement(device, shape, samples_s);
    m.model = plan.shard.model.name;
    m.tp = plan.shard.parallelism.tensor;
    measurements.push_back(std::move(m));
  }
  return measurements;
}

}  // namespace servesim::validation
