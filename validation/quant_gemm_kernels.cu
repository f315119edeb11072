#include "validation/quant_gemm_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <string>

#include "validation/device_support.cuh"
#include "validation/kernel_info.h"

namespace servesim::validation {
namespace {

constexpr int kWarpSize = 32;
constexpr int kThreads = static_cast<int>(kGemvColumnsPerBlock) * kWarpSize;

__device__ float to_float(__half x) {
  return __half2float(x);
}
__device__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ void store(__half* p, float x) {
  *p = __float2half_rn(x);
}
__device__ void store(__nv_bfloat16* p, float x) {
  *p = __float2bfloat16_rn(x);
}

__device__ float fp8_to_float(std::uint8_t bits) {
  __nv_fp8_e4m3 x;
  x.__x = bits;
  return static_cast<float>(x);
}

// Sums each row's partial over the warp and lets lane 0 write the outputs of this column.
template <typename T, int kRows>
__device__ void reduce_and_store(float (&sum)[kRows], T* c, std::int64_t row0, std::int64_t m,
                                 std::int64_t n, std::int64_t col, float scale) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
      sum[r] += __shfl_xor_sync(0xFFFFFFFFu, sum[r], offset);
  }
  if (threadIdx.x % kWarpSize != 0) return;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (row0 + r < m) store(c + (row0 + r) * n + col, sum[r] * scale);
  }
}

// Each lane takes 16-byte vectors of the weight row (32 int4 codes, four words) strided by the
// warp, so the warp reads 512 contiguous bytes per step.
template <typename T, int kRows>
__global__ void int4_gemv_kernel(const T* __restrict__ a, const std::uint32_t* __restrict__ packed,
                                 const T* __restrict__ scales, T* __restrict__ c, std::int64_t m,
                                 std::int64_t n, std::int64_t k, std::int64_t group_size) {
  const std::int64_t col =
      std::int64_t{blockIdx.x} * kGemvColumnsPerBlock + threadIdx.x / kWarpSize;
  const std::int64_t row0 = std::int64_t{blockIdx.y} * kRows;
  if (col >= n) return;
  const int lane = static_cast<int>(threadIdx.x % kWarpSize);
  const auto* w_row = reinterpret_cast<const uint4*>(packed + col * (k / 8));
  const T* s_row = scales + col * (k / group_size);
  float sum[kRows] = {};
  for (std::int64_t v = lane; v < k / 32; v += kWarpSize) {
    const uint4 q4 = w_row[v];
    const std::uint32_t words[4] = {q4.x, q4.y, q4.z, q4.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const std::int64_t first = v * 32 + w * 8;  // k index of the word's first code
      const float scale = to_float(s_row[first / group_size]);
      float weight[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int q = static_cast<int>((words[w] >> (4 * e)) & 0xFu);
        weight[e] = static_cast<float>(q - 8) * scale;
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (row0 + r >= m) continue;
        const uint4 raw = *reinterpret_cast<const uint4*>(a + (row0 + r) * k + first);
        const T* x = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int e = 0; e < 8; ++e)
          sum[r] += weight[e] * to_float(x[e]);
      }
    }
  }
  reduce_and_store<T, kRows>(sum, c, row0, m, n, col, 1.0f);
}

// Each lane takes 16-byte vectors (16 e4m3 values) of the weight row and of each token row.
template <typename T, int kRows>
__global__ void fp8_gemv_kernel(const std::uint8_t* __restrict__ a,
                                const std::uint8_t* __restrict__ w, float scale, T* __restrict__ c,
                                std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::int64_t col =
      std::int64_t{blockIdx.x} * kGemvColumnsPerBlock + threadIdx.x / kWarpSize;
  const std::int64_t row0 = std::int64_t{blockIdx.y} * kRows;
  if (col >= n) return;
  const int lane = static_cast<int>(threadIdx.x % kWarpSize);
  const auto* w_row = reinterpret_cast<const uint4*>(w + col * k);
  float sum[kRows] = {};
  for (std::int64_t v = lane; v < k / 16; v += kWarpSize) {
    const uint4 raw_w = w_row[v];
    const auto* w_bytes = reinterpret_cast<const std::uint8_t*>(&raw_w);
    float weight[16];
#pragma unroll
    for (int e = 0; e < 16; ++e)
      weight[e] = fp8_to_float(w_bytes[e]);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (row0 + r >= m) continue;
      const uint4 raw_a = reinterpret_cast<const uint4*>(a + (row0 + r) * k)[v];
      const auto* a_bytes = reinterpret_cast<const std::uint8_t*>(&raw_a);
#pragma unroll
      for (int e = 0; e < 16; ++e)
        sum[r] += weight[e] * fp8_to_float(a_bytes[e]);
    }
  }
  reduce_and_store<T, kRows>(sum, c, row0, m, n, col, scale);
}

dim3 grid_for(std::int64_t m, std::int64_t n, std::int64_t rows) {
  return dim3(static_cast<unsigned>((n + kGemvColumnsPerBlock - 1) / kGemvColumnsPerBlock),
              static_cast<unsigned>((m + rows - 1) / rows));
}

template <typename T, int kRows>
void int4_gemv(const Int4GemvArgs& g) {
  int4_gemv_kernel<T, kRows><<<grid_for(g.m, g.n, kRows), kThreads>>>(
      static_cast<const T*>(g.a), g.packed, static_cast<const T*>(g.scales), static_cast<T*>(g.c),
      g.m, g.n, g.k, g.group_size);
}

template <typename T, int kRows>
void fp8_gemv(const Fp8GemvArgs& g) {
  fp8_gemv_kernel<T, kRows><<<grid_for(g.m, g.n, kRows), kThreads>>>(
      g.a, g.w, g.a_scale * g.w_scale, static_cast<T*>(g.c), g.m, g.n, g.k);
}

// Calls run<T, rows>() for the args' dtype and the kernel's rows per pass at m.
template <template <typename, int> class Run, typename Args>
void dispatch(const Args& args) {
  const std::int64_t rows = gemv_rows_per_pass(args.m);
  const bool fp16 = args.dtype == ElementType::FP16;
  switch (rows) {
    case 1:
      return fp16 ? Run<__half, 1>::run(args) : Run<__nv_bfloat16, 1>::run(args);
    case 2:
      return fp16 ? Run<__half, 2>::run(args) : Run<__nv_bfloat16, 2>::run(args);
    case 4:
      return fp16 ? Run<__half, 4>::run(args) : Run<__nv_bfloat16, 4>::run(args);
    case 8:
      return fp16 ? Run<__half, 8>::run(args) : Run<__nv_bfloat16, 8>::run(args);
    default:
      return fp16 ? Run<__half, 16>::run(args) : Run<__nv_bfloat16, 16>::run(args);
  }
}

template <typename T, int kRows>
struct RunInt4 {
  static void run(const Int4GemvArgs& args) { int4_gemv<T, kRows>(args); }
};
template <typename T, int kRows>
struct RunFp8 {
  static void run(const Fp8GemvArgs& args) { fp8_gemv<T, kRows>(args); }
};

}  // namespace

void launch_int4_gemv(const Int4GemvArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  dispatch<RunInt4>(args);
  check(cudaGetLastError(), "int4_gemv launch");
}

void launch_fp8_gemv(const Fp8GemvArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  dispatch<RunFp8>(args);
  check(cudaGetLastError(), "fp8_gemv launch");
}

}  // namespace servesim::validation
