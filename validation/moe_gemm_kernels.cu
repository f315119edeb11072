#include "validation/moe_gemm_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <string>

#include "validation/device_support.cuh"
#include "validation/kernel_info.h"

namespace servesim::validation {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kFragment = 16;                                        // WMMA m = n = k
constexpr int kTileColumns = static_cast<int>(kGroupedTileColumns);  // four warps of 16
constexpr int kThreads = 128;
constexpr int kSlab = 64;  // k per shared-memory stage
// Shared rows are padded by 8 elements (144 bytes): fragment pointers stay 32-byte aligned
// (16 rows x 144 bytes) and consecutive rows start in different banks.
constexpr int kStride = kSlab + 8;
constexpr int kVector = 8;  // 16-bit elements per 16-byte load
constexpr int kVectorsPerRow = kSlab / kVector;

__device__ void store(__half* p, float x) {
  *p = __float2half_rn(x);
}
__device__ void store(__nv_bfloat16* p, float x) {
  *p = __float2bfloat16_rn(x);
}

template <int kRows>
struct Staging {
  static constexpr int kAVectors = kRows * kVectorsPerRow;
  static constexpr int kWVectors = kTileColumns * kVectorsPerRow;
  static constexpr int kAPerThread = (kAVectors + kThreads - 1) / kThreads;
  static constexpr int kWPerThread = kWVectors / kThreads;
  static constexpr int kStageBytes = (kRows + kTileColumns) * kStride * 2;
  static constexpr int kOutputBytes = kRows * kTileColumns * 4;
  static constexpr int kSharedBytes = kStageBytes > kOutputBytes ? kStageBytes : kOutputBytes;
  uint4 a[kAPerThread];
  uint4 w[kWPerThread];
};

// Loads the slab of k starting at k0 into registers: the tile's gathered activation rows and
// the expert's 64 weight rows; entries past k, past n or of padding rows are zero.
template <typename T, int kRows>
__device__ void fetch(Staging<kRows>& s, const T* a, const T* w_expert, const std::int32_t* pairs,
                      std::int64_t a_row_divisor, std::int64_t n0, std::int64_t n, std::int64_t k,
                      std::int64_t k0) {
  const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll
  for (int i = 0; i < Staging<kRows>::kAPerThread; ++i) {
    const int v = static_cast<int>(threadIdx.x) + i * kThreads;
    const int row = v / kVectorsPerRow;
    const std::int64_t col = k0 + (v % kVectorsPerRow) * kVector;
    const std::int32_t pair = v < Staging<kRows>::kAVectors ? pairs[row] : -1;
    s.a[i] = pair >= 0 && col < k
                 ? *reinterpret_cast<const uint4*>(a + (pair / a_row_divisor) * k + col)
                 : zero;
  }
#pragma unroll
  for (int i = 0; i < Staging<kRows>::kWPerThread; ++i) {
    const int v = static_cast<int>(threadIdx.x) + i * kThreads;
    const std::int64_t row = n0 + v / kVectorsPerRow;
    const std::int64_t col = k0 + (v % kVectorsPerRow) * kVector;
    s.w[i] = row < n && col < k ? *reinterpret_cast<const uint4*>(w_expert + row * k + col) : zero;
  }
}

template <typename T, int kRows>
__device__ void stash(const Staging<kRows>& s, T* a_shared, T* w_shared) {
#pragma unroll
  for (int i = 0; i < Staging<kRows>::kAPerThread; ++i) {
    const int v = static_cast<int>(threadIdx.x) + i * kThreads;
    if (v >= Staging<kRows>::kAVectors) break;
    *reinterpret_cast<uint4*>(a_shared + (v / kVectorsPerRow) * kStride +
                              (v % kVectorsPerRow) * kVector) = s.a[i];
  }
#pragma unroll
  for (int i = 0; i < Staging<kRows>::kWPerThread; ++i) {
    const int v = static_cast<int>(threadIdx.x) + i * kThreads;
    *reinterpret_cast<uint4*>(w_shared + (v / kVectorsPerRow) * kStride +
                              (v % kVectorsPerRow) * kVector) = s.w[i];
  }
}

// Block (tile, column block): warp j computes columns 16 j .. 16 j + 15 of every row fragment.
template <typename T, int kRows>
__global__ void __launch_bounds__(kThreads)
    grouped_gemm_kernel(const T* __restrict__ a, const T* __restrict__ w, T* __restrict__ c,
                        const std::int32_t* __restrict__ sorted_pairs,
                        const std::int32_t* __restrict__ tile_experts, std::int64_t n,
                        std::int64_t k, std::int64_t a_row_divisor) {
  constexpr int kFragments = kRows / kFragment;
  __shared__ __align__(128) unsigned char shared[Staging<kRows>::kSharedBytes];
  __shared__ std::int32_t pairs[kRows];
  T* a_shared = reinterpret_cast<T*>(shared);
  T* w_shared = a_shared + kRows * kStride;
  float* out_shared = reinterpret_cast<float*>(shared);  // reused once the slabs are done

  const std::int64_t tile = blockIdx.x;
  const std::int64_t n0 = std::int64_t{blockIdx.y} * kTileColumns;
  const T* w_expert = w + std::int64_t{tile_experts[tile]} * n * k;
  for (int r = static_cast<int>(threadIdx.x); r < kRows; r += kThreads)
    pairs[r] = sorted_pairs[tile * kRows + r];
  __syncthreads();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc[kFragments];
#pragma unroll
  for (int f = 0; f < kFragments; ++f)
    wmma::fill_fragment(acc[f], 0.0f);

  Staging<kRows> staging;
  fetch<T, kRows>(staging, a, w_expert, pairs, a_row_divisor, n0, n, k, 0);
  for (std::int64_t k0 = 0; k0 < k; k0 += kSlab) {
    stash<T, kRows>(staging, a_shared, w_shared);
    __syncthreads();
    if (k0 + kSlab < k) {
      fetch<T, kRows>(staging, a, w_expert, pairs, a_row_divisor, n0, n, k, k0 + kSlab);
    }
#pragma unroll
    for (int kk = 0; kk < kSlab; kk += kFragment) {
      // W is stored [column][k]: as the K x N operand that is column-major.
      wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, T, wmma::col_major> b;
      wmma::load_matrix_sync(b, w_shared + warp * kFragment * kStride + kk, kStride);
#pragma unroll
      for (int f = 0; f < kFragments; ++f) {
        wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, T, wmma::row_major> x;
        wmma::load_matrix_sync(x, a_shared + f * kFragment * kStride + kk, kStride);
        wmma::mma_sync(acc[f], x, b, acc[f]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int f = 0; f < kFragments; ++f) {
    wmma::store_matrix_sync(out_shared + f * kFragment * kTileColumns + warp * kFragment, acc[f],
                            kTileColumns, wmma::mem_row_major);
  }
  __syncthreads();
  for (int e = static_cast<int>(threadIdx.x); e < kRows * kTileColumns; e += kThreads) {
    const std::int32_t pair = pairs[e / kTileColumns];
    const std::int64_t col = n0 + e % kTileColumns;
    if (pair >= 0 && col < n) store(c + std::int64_t{pair} * n + col, out_shared[e]);
  }
}

template <typename T, int kRows>
void grouped_gemm(const GroupedGemmArgs& g) {
  const dim3 grid(static_cast<unsigned>(g.tiles),
                  static_cast<unsigned>((g.n + kTileColumns - 1) / kTileColumns));
  grouped_gemm_kernel<T, kRows><<<grid, kThreads>>>(
      static_cast<const T*>(g.a), static_cast<const T*>(g.w), static_cast<T*>(g.c), g.sorted_pairs,
      g.tile_experts, g.n, g.k, g.a_row_divisor);
}

template <typename T>
void grouped_gemm_rows(const GroupedGemmArgs& g) {
  switch (g.tile_rows) {
    case 16:
      return grouped_gemm<T, 16>(g);
    case 32:
      return grouped_gemm<T, 32>(g);
    case 64:
      return grouped_gemm<T, 64>(g);
    default:
      throw HarnessFailure("grouped gemm: tile_rows must be 16, 32 or 64, got " +
                           std::to_string(g.tile_rows));
  }
}

}  // namespace

void launch_grouped_gemm(const GroupedGemmArgs& args) {
  if (args.tiles == 0 || args.n == 0) return;
  if (args.dtype == ElementType::FP16) {
    grouped_gemm_rows<__half>(args);
  } else {
    grouped_gemm_rows<__nv_bfloat16>(args);
  }
  check(cudaGetLastError(), "grouped_gemm launch");
}

}  // namespace servesim::validation
