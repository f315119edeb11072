#pragma once

// Device plumbing shared by the harness subcommands: error checks, owning buffers, timing
// with CUDA events, random fills. Only compiled with the CUDA toolkit.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "validation/half_precision.h"
#include "validation/harness_options.h"

namespace servesim::validation {

// A harness run that must stop: a CUDA error or a failed verification (exit code 1).
struct HarnessFailure final : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const char* what);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size_bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::byte* data() const { return static_cast<std::byte*>(data_); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t size_bytes() const { return size_bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t size_bytes_ = 0;
};

template <typename T>
DeviceBuffer upload(const std::vector<T>& host) {
  DeviceBuffer buffer(host.size() * sizeof(T));
  check(cudaMemcpy(buffer.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
        "cudaMemcpy to device");
  return buffer;
}

template <typename T>
std::vector<T> download(const void* device, std::size_t count) {
  std::vector<T> host(count);
  check(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
        "cudaMemcpy to host");
  return host;
}

// Fills `count` 16-bit elements with values uniform in [-scale, scale) derived from `seed`
// and the index, on the device (fast for gigabytes of weights); download to see them.
void fill_random(void* device, std::size_t count, ElementType type, std::uint64_t seed,
                 float scale = 1.0f);

// Fills `size_bytes` bytes with random bits from `seed` and the index, each byte ANDed with
// `keep_mask` (kFp8FiniteMask keeps e4m3 values finite; int4 codes take every bit pattern).
void fill_random_bytes(void* device, std::size_t size_bytes, std::uint64_t seed,
                       std::uint8_t keep_mask = 0xFF);

// How many copies of a working set of `set_bytes` to rotate through so that the copies
// together are at least four times the L2 cache (and at least two): each timed call then
// finds its inputs in DRAM, as serving does. Capped at `max_sets`.
std::size_t rotation_sets(std::size_t set_bytes, std::size_t max_sets = 64);

// Runs launch(i) for `warmup` untimed and then `repeats` timed calls, i counting up from 0
// across both so that callers can rotate inputs; each timed call is bracketed by CUDA
// events on the default stream. Returns seconds per timed call.
std::vector<double> time_launches(int warmup, int repeats,
                                  const std::function<void(int call)>& launch);

// Back-to-back timing (TimingMode::Stream or Graph; README.md, "Timing"): `warmup` untimed
// calls, then one untimed sample and `repeats` timed ones, each `calls` calls enqueued on
// `stream` without waiting (Graph: the calls captured once into a CUDA graph, one graph launch
// per sample). CUDA events sit between samples and the host synchronises once at the end, so
// the GPU does not wait for the host between calls unless the host's work per call outlasts
// the kernel (Stream). launch(i) must enqueue on `stream`; i counts up from 0 so that callers
// can rotate inputs (a graph replays the inputs it captured). Returns seconds per call: each
// sample over `calls`.
std::vector<double> time_back_to_back(TimingMode mode, cudaStream_t stream, int warmup, int repeats,
                                      int calls, const std::function<void(int call)>& launch);

std::string device_name();

}  // namespace servesim::validation
