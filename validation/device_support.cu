#include "validation/device_support.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <utility>

namespace servesim::validation {
namespace {

__global__ void fill_random_kernel(std::uint16_t* out, std::size_t count, bool bf16,
                                   std::uint64_t seed, float scale) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count; i += stride) {
    std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float value = (static_cast<float>(z >> 40) * 0x1p-23f - 1.0f) * scale;
    out[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(value))
                  : __half_as_ushort(__float2half_rn(value));
  }
}

__global__ void fill_random_bytes_kernel(std::uint8_t* out, std::size_t size_bytes,
                                         std::uint64_t seed, std::uint8_t keep_mask) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < size_bytes;
       i += stride) {
    std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    out[i] = static_cast<std::uint8_t>(z >> 56) & keep_mask;
  }
}

}  // namespace

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw HarnessFailure(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

DeviceBuffer::DeviceBuffer(std::size_t size_bytes) : size_bytes_(size_bytes) {
  check(cudaMalloc(&data_, std::max<std::size_t>(size_bytes, 1)), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() {
  cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
  }
  return *this;
}

void fill_random(void* device, std::size_t count, ElementType type, std::uint64_t seed,
                 float scale) {
  if (count == 0) return;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 4096));
  fill_random_kernel<<<blocks, 256>>>(static_cast<std::uint16_t*>(device), count,
                                      type == ElementType::BF16, seed, scale);
  check(cudaGetLastError(), "fill_random launch");
}

void fill_random_bytes(void* device, std::size_t size_bytes, std::uint64_t seed,
                       std::uint8_t keep_mask) {
  if (size_bytes == 0) return;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((size_bytes + 255) / 256, 4096));
  fill_random_bytes_kernel<<<blocks, 256>>>(static_cast<std::uint8_t*>(device), size_bytes, seed,
                                            keep_mask);
  check(cudaGetLastError(), "fill_random_bytes launch");
}

std::size_t rotation_sets(std::size_t set_bytes, std::size_t max_sets) {
  int device = 0;
  int l2_bytes = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device),
        "cudaDeviceGetAttribute");
  const std::size_t footprint = 4 * static_cast<std::size_t>(l2_bytes);
  const std::size_t sets = (footprint + set_bytes - 1) / std::max<std::size_t>(set_bytes, 1);
  return std::clamp<std::size_t>(sets, 2, max_sets);
}

std::vector<double> time_launches(int warmup, int repeats,
                                  const std::function<void(int call)>& launch) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  int call = 0;
  for (int i = 0; i < warmup; ++i)
    launch(call++);
  std::vector<double> samples_s;
  for (int i = 0; i < repeats; ++i) {
    check(cudaEventRecord(start), "cudaEventRecord");
    launch(call++);
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

std::vector<double> time_back_to_back(TimingMode mode, cudaStream_t stream, int warmup, int repeats,
                                      int calls, const std::function<void(int call)>& launch) {
  if (mode == TimingMode::PerCall || repeats < 1 || calls < 1) {
    throw std::invalid_argument(
        "time_back_to_back: needs stream or graph timing, repeats and calls");
  }
  int call = 0;
  for (int i = 0; i < warmup; ++i)
    launch(call++);
  check(cudaStreamSynchronize(stream), "warm-up calls");
  cudaGraphExec_t graph_exec = nullptr;
  if (mode == TimingMode::Graph) {
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    for (int i = 0; i < calls; ++i)
      launch(call++);
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&graph_exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    check(cudaGraphUpload(graph_exec, stream), "cudaGraphUpload");
  }
  const auto sample = [&] {
    if (graph_exec != nullptr) {
      check(cudaGraphLaunch(graph_exec, stream), "cudaGraphLaunch");
      return;
    }
    for (int i = 0; i < calls; ++i)
      launch(call++);
  };
  std::vector<cudaEvent_t> events(static_cast<std::size_t>(repeats) + 1, nullptr);
  for (cudaEvent_t& event : events)
    check(cudaEventCreate(&event), "cudaEventCreate");
  sample();  // untimed: the first timed sample then starts behind a busy GPU, not a launch
  for (int r = 0; r < repeats; ++r) {
    check(cudaEventRecord(events[static_cast<std::size_t>(r)], stream), "cudaEventRecord");
    sample();
  }
  check(cudaEventRecord(events.back(), stream), "cudaEventRecord");
  check(cudaEventSynchronize(events.back()), "cudaEventSynchronize");
  std::vector<double> samples_s;
  for (std::size_t r = 0; r + 1 < events.size(); ++r) {
    float elapsed_ms = 0.0f;
    check(cudaEventElapsedTime(&elapsed_ms, events[r], events[r + 1]), "cudaEventElapsedTime");
    samples_s.push_back(static_cast<double>(elapsed_ms) * 1e-3 / calls);
  }
  for (cudaEvent_t event : events)
    check(cudaEventDestroy(event), "cudaEventDestroy");
  if (graph_exec != nullptr) check(cudaGraphExecDestroy(graph_exec), "cudaGraphExecDestroy");
  return samples_s;
}

std::string device_name() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
  return props.name;
}

}  // namespace servesim::validation
