#include "validation/layer_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <vector>

#include "validation/cpu_reference.h"
#include "validation/device_support.cuh"

namespace servesim::validation {
namespace {

constexpr int kThreads = 256;

__device__ float load(const __half* p, std::int64_t i) {
  return __half2float(p[i]);
}
__device__ float load(const __nv_bfloat16* p, std::int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ void store(__half* p, std::int64_t i, float x) {
  p[i] = __float2half_rn(x);
}
__device__ void store(__nv_bfloat16* p, std::int64_t i, float x) {
  p[i] = __float2bfloat16_rn(x);
}

template <typename T>
__global__ void rms_norm_kernel(const T* in, T* out, std::int64_t width) {
  const std::int64_t base = blockIdx.x * width;
  float square_sum = 0.0f;
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float x = load(in, base + i);
    square_sum += x * x;
  }
  __shared__ float partial[kThreads];
  partial[threadIdx.x] = square_sum;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const float inverse = rsqrtf(partial[0] / static_cast<float>(width) + 1e-5f);
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x)
    store(out, base + i, load(in, base + i) * inverse);
}

template <typename T>
__global__ void add_kernel(T* x, const T* y, std::int64_t count) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count; i += stride)
    store(x, i, load(x, i) + load(y, i));
}

template <typename T>
__global__ void activation_kernel(const T* in, T* out, std::int64_t rows, std::int64_t width,
                                  bool gated) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t in_width = gated ? 2 * width : width;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows * width;
       i += stride) {
    const std::int64_t r = i / width;
    const std::int64_t c = i % width;
    const float gate = load(in, r * in_width + c);
    const float up = gated ? load(in, r * in_width + width + c) : 1.0f;
    store(out, i, gate / (1.0f + expf(-gate)) * up);
  }
}

unsigned grid_for(std::int64_t count) {
  return static_cast<unsigned>(std::min<std::int64_t>((count + kThreads - 1) / kThreads, 65536));
}

template <typename T>
void rms_norm(const void* in, void* out, std::int64_t rows, std::int64_t width,
              cudaStream_t stream) {
  rms_norm_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), width);
}

std::vector<float> to_floats(ElementType dtype, const std::vector<std::uint16_t>& bits) {
  std::vector<float> values;
  for (const std::uint16_t b : bits)
    values.push_back(bits_to_float(dtype, b));
  return values;
}

void require_close(const std::vector<float>& expected, const std::vector<float>& actual,
                   ElementType dtype, const std::string& what) {
  const ToleranceReport report = compare_to_reference(expected, actual, relative_tolerance(dtype));
  if (!report.passed()) {
    throw HarnessFailure(
        what + ": verification failed at element " + std::to_string(report.worst_index) +
        ": expected " + std::to_string(report.expected) + ", got " + std::to_string(report.actual));
  }
}

}  // namespace

void launch_rms_norm(ElementType dtype, const void* in, void* out, std::int64_t rows,
                     std::int64_t width, cudaStream_t stream) {
  if (rows == 0) return;
  if (dtype == ElementType::FP16) {
    rms_norm<__half>(in, out, rows, width, stream);
  } else {
    rms_norm<__nv_bfloat16>(in, out, rows, width, stream);
  }
  check(cudaGetLastError(), "rms_norm launch");
}

void launch_add(ElementType dtype, void* x, const void* y, std::int64_t count,
                cudaStream_t stream) {
  if (count == 0) return;
  if (dtype == ElementType::FP16) {
    add_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<__half*>(x),
                                                         static_cast<const __half*>(y), count);
  } else {
    add_kernel<<<grid_for(count), kThreads, 0, stream>>>(
        static_cast<__nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(y), count);
  }
  check(cudaGetLastError(), "add launch");
}

void launch_activation(ElementType dtype, const void* in, void* out, std::int64_t rows,
                       std::int64_t width, bool gated, cudaStream_t stream) {
  if (rows == 0) return;
  const unsigned grid = grid_for(rows * width);
  if (dtype == ElementType::FP16) {
    activation_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(in),
                                                     static_cast<__half*>(out), rows, width, gated);
  } else {
    activation_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(in),
                                                     static_cast<__nv_bfloat16*>(out), rows, width,
                                                     gated);
  }
  check(cudaGetLastError(), "activation launch");
}

void verify_layer_kernels(ElementType dtype, std::int64_t hidden, std::int64_t intermediate,
                          bool gated) {
  constexpr std::int64_t kRows = 3;
  const auto hidden_count = static_cast<std::size_t>(kRows * hidden);
  const std::vector<std::uint16_t> x = random_elements(dtype, hidden_count, 71);
  const std::vector<std::uint16_t> y = random_elements(dtype, hidden_count, 72);
  const DeviceBuffer x_device = upload(x);
  const DeviceBuffer y_device = upload(y);
  const DeviceBuffer out(hidden_count * 2);

  launch_rms_norm(dtype, x_device.data(), out.data(), kRows, hidden);
  const auto normed = to_floats(dtype, download<std::uint16_t>(out.data(), hidden_count));
  const auto x_values = to_floats(dtype, x);
  std::vector<float> expected;
  for (std::int64_t r = 0; r < kRows; ++r) {
    const auto row = reference_rms_norm(std::span<const float>(x_values).subspan(
        static_cast<std::size_t>(r * hidden), static_cast<std::size_t>(hidden)));
    expected.insert(expected.end(), row.begin(), row.end());
  }
  require_close(expected, normed, dtype, "rms_norm");

  launch_add(dtype, x_device.data(), y_device.data(), kRows * hidden);
  const auto sums = to_floats(dtype, download<std::uint16_t>(x_device.data(), hidden_count));
  const auto y_values = to_floats(dtype, y);
  expected.clear();
  for (std::size_t i = 0; i < hidden_count; ++i)
    expected.push_back(x_values[i] + y_values[i]);
  require_close(expected, sums, dtype, "add");

  const std::int64_t in_width = gated ? 2 * intermediate : intermediate;
  const auto in = random_elements(dtype, static_cast<std::size_t>(kRows * in_width), 73);
  const auto in_values = to_floats(dtype, in);
  const DeviceBuffer in_device = upload(in);
  const DeviceBuffer act(static_cast<std::size_t>(kRows * intermediate) * 2);
  launch_activation(dtype, in_device.data(), act.data(), kRows, intermediate, gated);
  const auto activated = to_floats(
      dtype, download<std::uint16_t>(act.data(), static_cast<std::size_t>(kRows * intermediate)));
  expected.clear();
  for (std::int64_t r = 0; r < kRows; ++r) {
    for (std::int64_t c = 0; c < intermediate; ++c) {
      const float gate = in_values[static_cast<std::size_t>(r * in_width + c)];
      const float up =
          gated ? in_values[static_cast<std::size_t>(r * in_width + intermediate + c)] : 1.0f;
      expected.push_back(reference_silu_mul(gate, up));
    }
  }
  require_close(expected, activated, dtype, "activation");
}

}  // namespace servesim::validation
