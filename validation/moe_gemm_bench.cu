// `moe-gemm`: the grouped expert GEMM of a mixture-of-experts layer at small tokens per expert.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "validation/cpu_reference.h"
#include "validation/device_support.cuh"
#include "validation/harness_commands.cuh"
#include "validation/harness_record.h"
#include "validation/moe_gemm_kernels.cuh"

namespace servesim::validation {
namespace {

// Rotating copies hold every expert's weights; they stop at this footprint (at least two).
constexpr std::size_t kMaxRotationBytes = 16ull << 30;

// The routed rows, weights and output of one case, in `sets` copies of the weights (filled on
// the device), with the routing uploaded once.
struct GroupedProblem {
  GroupedProblem(const MoeGemmCase& c, std::size_t weight_sets, std::uint64_t seed)
      : shape(c.shape),
        groups(c.groups),
        sets(weight_sets),
        a_count(static_cast<std::size_t>(
            (shape.activation_per_pair ? groups.routed_rows : shape.tokens) * shape.k)),
        w_count(static_cast<std::size_t>(shape.experts * shape.n * shape.k)),
        c_count(static_cast<std::size_t>(groups.routed_rows * shape.n)),
        a(a_count * 2),
        w(sets * w_count * 2),
        out(c_count * 2),
        sorted_pairs(upload(groups.sorted_pairs)),
        tile_experts(upload(groups.tile_experts)) {
    fill_random(a.data(), a_count, shape.dtype, seed);
    fill_random(w.data(), sets * w_count, shape.dtype, seed + 1);
  }

  void launch(std::size_t set) const {
    launch_grouped_gemm({shape.dtype, a.data(), w.data() + set * w_count * 2, out.data(),
                         sorted_pairs.as<std::int32_t>(), tile_experts.as<std::int32_t>(),
                         static_cast<std::int64_t>(groups.tile_experts.size()), groups.tile_rows,
                         shape.n, shape.k, shape.activation_per_pair ? 1 : shape.top_k});
  }

  MoeGemmShape shape;
  ExpertGroups groups;
  std::size_t sets;
  std::size_t a_count;
  std::size_t w_count;
  std::size_t c_count;
  DeviceBuffer a;
  DeviceBuffer w;
  DeviceBuffer out;
  DeviceBuffer sorted_pairs;
  DeviceBuffer tile_experts;
};

std::string describe(const MoeGemmShape& s, const ExpertGroups& g) {
  return "moe-gemm " + s.op + " tokens=" + std::to_string(s.tokens) +
         " experts_touched=" + std::to_string(g.experts_touched.size()) +
         " tile_rows=" + std::to_string(g.tile_rows) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + " " + std::string(element_type_name(s.dtype));
}

// The expert of every routed row, from the tiles the kernel reads.
std::vector<std::int32_t> expert_of_pairs(const ExpertGroups& g) {
  std::vector<std::int32_t> experts(static_cast<std::size_t>(g.routed_rows), -1);
  for (std::size_t row = 0; row < g.sorted_pairs.size(); ++row) {
    const std::int32_t pair = g.sorted_pairs[row];
    if (pair >= 0) {
      experts[static_cast<std::size_t>(pair)] =
          g.tile_experts[row / static_cast<std::size_t>(g.tile_rows)];
    }
  }
  return experts;
}

// Runs weight copy 0 once and compares sampled outputs with the CPU reference, reading back
// only the weight rows the samples need.
void verify(const GroupedProblem& p) {
  check(cudaMemset(p.out.data(), 0xFF, p.c_count * 2), "cudaMemset");  // NaN until written
  p.launch(0);
  check(cudaDeviceSynchronize(), "moe-gemm kernel");
  const auto a_host = download<std::uint16_t>(p.a.data(), p.a_count);
  const auto c_host = download<std::uint16_t>(p.out.data(), p.c_count);
  const std::vector<std::int32_t> experts = expert_of_pairs(p.groups);
  const auto n = static_cast<std::size_t>(p.shape.n);
  const std::int64_t divisor = p.shape.activation_per_pair ? 1 : p.shape.top_k;
  const std::vector<std::size_t> entries = sampled_entries(p.c_count);
  std::vector<float> expected;
  std::vector<float> actual;
  for (const std::size_t entry : entries) {
    const std::size_t pair = entry / n;
    const std::size_t row = static_cast<std::size_t>(experts[pair]) * n + entry % n;
    const auto w_row =
        download<std::uint16_t>(p.w.data() + row * static_cast<std::size_t>(p.shape.k) * 2,
                                static_cast<std::size_t>(p.shape.k));
    expected.push_back(reference_gemm_entry(p.shape.dtype, a_host, w_row, p.shape.k,
                                            static_cast<std::int64_t>(pair) / divisor, 0));
    actual.push_back(bits_to_float(p.shape.dtype, c_host[entry]));
  }
  const ToleranceReport report =
      compare_to_reference(expected, actual, relative_tolerance(p.shape.dtype));
  if (!report.passed()) {
    const std::size_t entry = entries[report.worst_index];
    throw HarnessFailure(describe(p.shape, p.groups) + ": verification failed at routed row " +
                         std::to_string(entry / n) + " column " + std::to_string(entry % n) +
                         ": expected " + std::to_string(report.expected) + ", got " +
                         std::to_string(report.actual));
  }
}

// Copies of the weights so that the touched experts' bytes of the copies together exceed
// four L2 caches, within kMaxRotationBytes of all experts' weights.
std::size_t weight_sets(const MoeGemmCase& c) {
  const MoeGemmShape& s = c.shape;
  const auto expert_bytes = static_cast<std::size_t>(s.n * s.k * 2);
  const std::size_t touched_bytes = c.groups.experts_touched.size() * expert_bytes;
  const std::size_t all_bytes = static_cast<std::size_t>(s.experts) * expert_bytes;
  return rotation_sets(touched_bytes, std::max<std::size_t>(2, kMaxRotationBytes / all_bytes));
}

}  // namespace

std::vector<HarnessRecord> measure_moe_gemms(const HarnessOptions& options,
                                             const MoeGemmPlan& plan) {
  const std::string device = device_name();
  std::vector<HarnessRecord> records;
  for (const MoeGemmCase& c : plan.cases) {
    {
      const GroupedProblem check_problem(c, 1,
                                         0xE0Eull + static_cast<std::uint64_t>(c.shape.tokens));
      verify(check_problem);
    }
    const GroupedProblem problem(c, weight_sets(c), 11);
    const std::vector<double> samples_s = time_launches(
        kWarmupCalls, options.repeats,
        [&](int call) { problem.launch(static_cast<std::size_t>(call) % problem.sets); });
    HarnessRecord record = make_record(device, c.shape, c.groups, samples_s);
    record.measurement.model = plan.shard.model.name;
    record.measurement.tp = plan.shard.parallelism.tensor;
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace servesim::validation
