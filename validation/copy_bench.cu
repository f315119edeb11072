// `bandwidth`: device-to-device copy bandwidth by a copy kernel and by cudaMemcpy.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "validation/device_support.cuh"
#include "validation/harness_commands.cuh"
#include "validation/reference_check.h"

namespace servesim::validation {
namespace {

// Several pairs whose footprint is many times the L2 cache (50 MB on H100/H200), so that
// every timed copy streams from DRAM as serving weights and KV caches do.
constexpr std::uint64_t kMinFootprintBytes = 256ull << 20;
constexpr std::uint64_t kMinPairs = 4;
constexpr std::uint64_t kPairAlignBytes = 256;  // keeps 16-byte vector accesses aligned

// 16-byte words give each warp full 512-byte transactions; the grid-stride loop lets one
// launch shape serve every size, and the byte loop copies the tail that is not a word.
__global__ void copy_kernel(const std::byte* __restrict__ src, std::byte* __restrict__ dst,
                            std::size_t size_bytes) {
  const std::size_t start = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t words = size_bytes / sizeof(uint4);
  const auto* src_words = reinterpret_cast<const uint4*>(src);
  auto* dst_words = reinterpret_cast<uint4*>(dst);
  for (std::size_t i = start; i < words; i += stride) {
    dst_words[i] = src_words[i];
  }
  for (std::size_t i = words * sizeof(uint4) + start; i < size_bytes; i += stride) {
    dst[i] = src[i];
  }
}

enum class CopyOp { Kernel, Memcpy };

// Source and destination arenas carved into `pairs` slots of `stride_bytes`; timed copies
// rotate through the slots so no slot is still in L2 when it comes round again.
struct CopyBench {
  std::uint64_t size_bytes;
  std::uint64_t stride_bytes;
  std::uint64_t pairs;
  unsigned int blocks;
  DeviceBuffer src;
  DeviceBuffer dst;

  void copy(CopyOp op, std::uint64_t pair) const {
    const std::byte* from = src.data() + pair * stride_bytes;
    std::byte* to = dst.data() + pair * stride_bytes;
    if (op == CopyOp::Kernel) {
      copy_kernel<<<blocks, 256>>>(from, to, size_bytes);
      check(cudaGetLastError(), "copy_kernel launch");
    } else {
      check(cudaMemcpy(to, from, size_bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    }
  }
};

void verify(const CopyBench& bench, CopyOp op, const std::vector<std::byte>& expected,
            const char* name) {
  check(cudaMemset(bench.dst.data(), 0, expected.size()), "cudaMemset");
  for (std::uint64_t pair = 0; pair < bench.pairs; ++pair) {
    bench.copy(op, pair);
  }
  const auto actual = download<std::byte>(bench.dst.data(), expected.size());
  if (const auto at = first_mismatch(expected, actual)) {
    throw HarnessFailure(std::string(name) + ": copy verification failed in pair " +
                         std::to_string(*at / bench.stride_bytes) + " at byte " +
                         std::to_string(*at % bench.stride_bytes));
  }
}

}  // namespace

std::vector<Measurement> measure_bandwidth(const HarnessOptions& options) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
  const auto l2_bytes = static_cast<std::uint64_t>(props.l2CacheSize);
  const std::uint64_t size_bytes = options.size_bytes;
  const std::uint64_t stride_bytes =
      (size_bytes + kPairAlignBytes - 1) / kPairAlignBytes * kPairAlignBytes;
  const std::uint64_t footprint_bytes = std::max(kMinFootprintBytes, 4 * l2_bytes);
  const std::uint64_t pairs =
      std::max(kMinPairs, (footprint_bytes + 2 * stride_bytes - 1) / (2 * stride_bytes));
  const std::uint64_t words = std::max<std::uint64_t>(1, size_bytes / sizeof(uint4));
  const auto blocks = static_cast<unsigned int>(std::min<std::uint64_t>(
      (words + 255) / 256, 16ull * static_cast<unsigned>(props.multiProcessorCount)));
  const CopyBench bench{size_bytes,
                        stride_bytes,
                        pairs,
                        blocks,
                        DeviceBuffer(pairs * stride_bytes),
                        DeviceBuffer(pairs * stride_bytes)};

  // Each pair gets its own seed, so a copy from the wrong pair fails verification.
  std::vector<std::byte> expected(pairs * stride_bytes);
  for (std::uint64_t pair = 0; pair < pairs; ++pair) {
    fill_pattern(std::span(expected).subspan(pair * stride_bytes, size_bytes),
                 static_cast<std::uint32_t>(pair));
  }
  check(cudaMemcpy(bench.src.data(), expected.data(), expected.size(), cudaMemcpyHostToDevice),
        "cudaMemcpy to device");

  std::vector<Measurement> measurements;
  for (const auto& [op, kind] :
       {std::pair{CopyOp::Kernel, "copy_kernel_d2d"}, std::pair{CopyOp::Memcpy, "memcpy_d2d"}}) {
    verify(bench, op, expected, kind);
    const std::vector<double> samples_s = time_launches(
        kWarmupCalls, options.repeats,
        [&bench, op](int call) { bench.copy(op, static_cast<std::uint64_t>(call) % bench.pairs); });
    measurements.push_back(make_copy_measurement(props.name, kind, size_bytes, samples_s));
  }
  return measurements;
}

}  // namespace servesim::validation
