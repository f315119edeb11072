#include "validation/attention_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <string>

#include "validation/device_support.cuh"

namespace servesim::validation {
namespace {

constexpr int kWarps = 4;
constexpr int kPerLane = static_cast<int>(kMaxAttentionHeadDim) / 32;

__device__ float to_float(__half x) {
  return __half2float(x);
}
__device__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <typename T>
__device__ T from_float(float x);
template <>
__device__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <bool kPaged>
__device__ std::int64_t kv_row(const KvAddressing& kv, std::int32_t sequence, std::int32_t token) {
  if constexpr (kPaged) {
    const std::int32_t block =
        kv.block_table[sequence * kv.max_blocks_per_sequence + token / kv.block_size];
    return std::int64_t{block} * kv.block_size + token % kv.block_size;
  } else {
    return kv.sequence_start_rows[sequence] + token;
  }
}

template <typename T, bool kPaged>
__global__ void __launch_bounds__(kWarps * 32) attention_kernel(AttentionArgs args) {
  const std::int64_t query_index = blockIdx.x;
  const int head = static_cast<int>(blockIdx.y);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int d = static_cast<int>(args.heads.head_dim);
  const int kv_head = head / static_cast<int>(args.heads.num_heads / args.heads.num_kv_heads);
  const std::int64_t row_elements = args.heads.num_kv_heads * d;
  const AttentionQuery query = args.queries[query_index];
  const T* q = static_cast<const T*>(args.q) + query_index * args.q_row_stride + head * d;
  const T* keys = static_cast<const T*>(args.k) + kv_head * d;
  const T* values = static_cast<const T*>(args.v) + kv_head * d;

  // The 1/sqrt(d) scale goes into q once instead of into every score.
  const float scale = rsqrtf(static_cast<float>(d));
  float q_reg[kPerLane];
  float acc[kPerLane];
  for (int i = 0; i < kPerLane; ++i) {
    const int e = i * 32 + lane;
    q_reg[i] = e < d ? to_float(q[e]) * scale : 0.0f;
    acc[i] = 0.0f;
  }
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int t = warp; t < query.keys; t += kWarps) {
    const std::int64_t row = kv_row<kPaged>(args.kv, query.sequence, t) * row_elements;
    float score = 0.0f;
    for (int i = 0; i < kPerLane; ++i) {
      const int e = i * 32 + lane;
      if (e < d) score += q_reg[i] * to_float(keys[row + e]);
    }
    for (int offset = 16; offset > 0; offset /= 2)
      score += __shfl_xor_sync(0xFFFFFFFFu, score, offset);
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);  // 0 for the first key
    const float weight = expf(score - new_max);
    running_sum = running_sum * correction + weight;
    for (int i = 0; i < kPerLane; ++i) {
      const int e = i * 32 + lane;
      if (e < d) acc[i] = acc[i] * correction + weight * to_float(values[row + e]);
    }
    running_max = new_max;
  }

  __shared__ float warp_max[kWarps];
  __shared__ float warp_sum[kWarps];
  __shared__ float warp_acc[kWarps][kMaxAttentionHeadDim];
  if (lane == 0) {
    warp_max[warp] = running_max;
    warp_sum[warp] = running_sum;
  }
  for (int i = 0; i < kPerLane; ++i) {
    const int e = i * 32 + lane;
    if (e < d) warp_acc[warp][e] = acc[i];
  }
  __syncthreads();
  float block_max = -INFINITY;
  for (int w = 0; w < kWarps; ++w)
    block_max = fmaxf(block_max, warp_max[w]);
  float total = 0.0f;
  float factor[kWarps];
  for (int w = 0; w < kWarps; ++w) {
    // A warp that saw no key has max -inf and sum 0: its factor is 0.
    factor[w] = expf(warp_max[w] - block_max);
    total += warp_sum[w] * factor[w];
  }
  T* out = static_cast<T*>(args.out) + (query_index * args.heads.num_heads + head) * d;
  for (int e = static_cast<int>(threadIdx.x); e < d; e += kWarps * 32) {
    float value = 0.0f;
    for (int w = 0; w < kWarps; ++w)
      value += warp_acc[w][e] * factor[w];
    out[e] = from_float<T>(value / total);
  }
}

template <typename T>
void launch_typed(const AttentionArgs& args, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(args.num_queries),
                  static_cast<unsigned>(args.heads.num_heads));
  if (args.kv.block_size > 0) {
    attention_kernel<T, true><<<grid, kWarps * 32, 0, stream>>>(args);
  } else {
    attention_kernel<T, false><<<grid, kWarps * 32, 0, stream>>>(args);
  }
}

}  // namespace

void launch_attention(const AttentionArgs& args, cudaStream_t stream) {
  const HeadShape& h = args.heads;
  if (h.head_dim <= 0 || h.head_dim > kMaxAttentionHeadDim || h.num_kv_heads <= 0 ||
      h.num_heads % h.num_kv_heads != 0 || h.num_heads > 65535) {
    throw HarnessFailure("attention kernel: unsupported heads " + std::to_string(h.num_heads) +
                         "/" + std::to_string(h.num_kv_heads) + " x " + std::to_string(h.head_dim) +
                         " (head_dim at most " + std::to_string(kMaxAttentionHeadDim) + ")");
  }
  if (args.num_queries == 0) return;
  if (args.dtype == ElementType::FP16) {
    launch_typed<__half>(args, stream);
  } else {
    launch_typed<__nv_bfloat16>(args, stream);
  }
  check(cudaGetLastError(), "attention kernel launch");
}

}  // namespace servesim::validation
