// servesim-harness: measures operators on a real GPU so that the simulator's hardware
// profiles can be calibrated against them. Exit codes (also in README.md): 0 ok, 1 CUDA
// error or failed verification, 2 usage error, 10 no CUDA device. 10 is distinct so that
// scripts on CPU-only hosts can skip the measurement instead of failing.
#include <cuda_runtime.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "validation/measurement.h"
#include "validation/reference_check.h"

namespace {

namespace sv = servesim::validation;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 10;

// Several pairs whose footprint is many times the L2 cache (50 MB on H100/H200), so that
// every timed copy streams from DRAM as serving weights and KV caches do.
constexpr std::uint64_t kMinFootprintBytes = 256ull << 20;
constexpr std::uint64_t kMinPairs = 4;
constexpr std::uint64_t kPairAlignBytes = 256;  // keeps 16-byte vector accesses aligned
constexpr int kWarmupCopies = 3;

constexpr std::string_view kUsage =
    R"(usage: servesim-harness bandwidth [--bytes N] [--repeats R] [--out FILE]

Measures device-to-device copy bandwidth on CUDA device 0 (choose another with
CUDA_VISIBLE_DEVICES) with a vectorised copy kernel ("copy_kernel_d2d") and with
cudaMemcpyDeviceToDevice ("memcpy_d2d"). Each copy is verified against a host pattern
before timing. Bandwidth counts read plus write (2 x N bytes) per median copy time.

options:
  --bytes N     bytes per copy, a positive integer (default 67108864 = 64 MiB)
  --repeats R   timed copies per operator after 3 warm-up copies; the median, min and
                max are reported (default 20)
  --out FILE    write the JSON result to FILE (default: standard output)
  -h, --help    print this help

exit codes: 0 ok, 1 CUDA error or copy verification failed, 2 usage error,
            10 no CUDA device found
)";

struct BandwidthOptions {
  std::uint64_t size_bytes = 64ull << 20;
  int repeats = 20;
  std::string out_path;  // empty: standard output
};

struct UsageError final : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

std::uint64_t parse_positive(std::string_view flag, std::string_view text, std::uint64_t max) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc{} || ptr != end || value == 0 || value > max) {
    throw UsageError(std::string(flag) + " expects an integer in [1, " + std::to_string(max) +
                     "], got '" + std::string(text) + "'");
  }
  return value;
}

// Returns false when help was asked for. Later subcommands (gemm, attention) dispatch here.
bool parse_args(const std::vector<std::string_view>& args, BandwidthOptions& options) {
  if (args.empty()) throw UsageError("missing subcommand (expected 'bandwidth')");
  if (args[0] == "-h" || args[0] == "--help") return false;
  if (args[0] != "bandwidth") throw UsageError("unknown subcommand '" + std::string(args[0]) + "'");
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string_view flag = args[i];
    if (flag == "-h" || flag == "--help") return false;
    if (flag != "--bytes" && flag != "--repeats" && flag != "--out") {
      throw UsageError("unknown option '" + std::string(flag) + "'");
    }
    if (i + 1 == args.size() || args[i + 1].empty()) {
      throw UsageError(std::string(flag) + " needs a value");
    }
    const std::string_view value = args[++i];
    if (flag == "--bytes") options.size_bytes = parse_positive(flag, value, 1ull << 40);
    if (flag == "--repeats") {
      options.repeats = static_cast<int>(parse_positive(flag, value, 100000));
    }
    if (flag == "--out") options.out_path = value;
  }
  return true;
}

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

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t size_bytes) {
    check(cudaMalloc(&data_, size_bytes), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::byte* data() const { return static_cast<std::byte*>(data_); }

 private:
  void* data_ = nullptr;
};

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
  std::vector<std::byte> actual(expected.size());
  check(cudaMemcpy(actual.data(), bench.dst.data(), actual.size(), cudaMemcpyDeviceToHost),
        "cudaMemcpy to host");
  if (const auto at = sv::first_mismatch(expected, actual)) {
    throw std::runtime_error(std::string(name) + ": copy verification failed in pair " +
                             std::to_string(*at / bench.stride_bytes) + " at byte " +
                             std::to_string(*at % bench.stride_bytes));
  }
}

std::vector<double> time_copies(const CopyBench& bench, CopyOp op, int repeats) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::uint64_t pair = 0;
  for (int i = 0; i < kWarmupCopies; ++i) {
    bench.copy(op, pair++ % bench.pairs);
  }
  std::vector<double> samples_s;
  for (int i = 0; i < repeats; ++i) {
    check(cudaEventRecord(start), "cudaEventRecord");
    bench.copy(op, pair++ % bench.pairs);
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float elapsed_ms = 0.0f;
    check(cudaEventElapsedTime(&elapsed_ms, start, stop), "cudaEventElapsedTime");
    samples_s.push_back(static_cast<double>(elapsed_ms) * 1e-3);
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return samples_s;
}

int run_bandwidth(const BandwidthOptions& options) {
  // Open the output first: an unwritable path should fail before minutes of measuring.
  std::ofstream file;
  if (!options.out_path.empty()) {
    file.open(options.out_path);
    if (!file) throw std::runtime_error("cannot open " + options.out_path + " for writing");
  }
  std::ostream& out = options.out_path.empty() ? std::cout : file;
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
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
    sv::fill_pattern(std::span(expected).subspan(pair * stride_bytes, size_bytes),
                     static_cast<std::uint32_t>(pair));
  }
  check(cudaMemcpy(bench.src.data(), expected.data(), expected.size(), cudaMemcpyHostToDevice),
        "cudaMemcpy to device");

  std::vector<sv::Measurement> measurements;
  for (const auto& [op, kind] :
       {std::pair{CopyOp::Kernel, "copy_kernel_d2d"}, std::pair{CopyOp::Memcpy, "memcpy_d2d"}}) {
    verify(bench, op, expected, kind);
    const std::vector<double> samples_s = time_copies(bench, op, options.repeats);
    measurements.push_back(sv::make_copy_measurement(props.name, kind, size_bytes, samples_s));
  }

  sv::write_measurements_json(out, props.name, measurements);
  if (!out.flush()) throw std::runtime_error("cannot write the JSON output");
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  BandwidthOptions options;
  try {
    if (!parse_args(std::vector<std::string_view>(argv + 1, argv + argc), options)) {
      std::cout << kUsage;
      return kExitOk;
    }
  } catch (const UsageError& error) {
    std::cerr << "servesim-harness: " << error.what() << " (see --help)\n";
    return kExitUsage;
  }
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::cerr << "servesim-harness: no CUDA device found\n";
    return kExitNoDevice;
  }
  try {
    return run_bandwidth(options);
  } catch (const std::exception& error) {
    std::cerr << "servesim-harness: " << error.what() << '\n';
    return kExitFailure;
  }
}
