#pragma once

#include <algorithm>
#include <cmath>

namespace servesim {

// FLOPs and HBM bytes of one kernel. The roofline model and calibration both count work with
// these functions, so a profile fitted to measured kernels prices the simulator's kernels
// the same way.
struct KernelWork {
  double flops = 0;
  double bytes = 0;
  double masked_flops = 0;  // attention: FLOPs of the pairs the causal mask hides
  double idle_flops = 0;    // GEMM: FLOPs of the tile slots quantization leaves idle
};

// How a GEMM's output is cut into tiles and the tiles into waves: one tile per SM at a time.
struct GemmTiling {
  double tile_m = 128;  // rows (tokens) of an output tile
  double tile_n = 128;  // columns of an output tile
  double sm_count = 0;  // 0: unknown, no quantization
};

// FLOPs an [m x k] x [k x n] GEMM spends on idle tile slots: its ceil(m / tile_m) x
// ceil(n / tile_n) output tiles run in ceil(tiles / SMs) waves, and every wave costs as much
// as SMs full tiles, so the padding of the edge tiles and the SMs idle in the last wave add
// 2 k (waves x SMs x tile_m x tile_n - m n) FLOPs. O(1), no allocation.
inline double gemm_idle_flops(double m, double n, double k, const GemmTiling& t) noexcept {
  if (!(t.sm_count > 0) || !(m > 0) || !(n > 0) || !(t.tile_m > 0) || !(t.tile_n > 0)) return 0;
  const double tiles = std::ceil(m / t.tile_m) * std::ceil(n / t.tile_n);
  const double slots = std::ceil(tiles / t.sm_count) * t.sm_count * t.tile_m * t.tile_n;
  return 2 * k * std::max(slots - m * n, 0.0);
}

// An [m x k] activation times a [k x n] weight: the weight is read once, the activation in
// and the result out.
// `tiling` prices the quantization of its output into tiles and waves.
inline KernelWork gemm_work(double m, double n, double k, double weight_bytes,
                            double activation_bytes, const GemmTiling& tiling = {}) noexcept {
  return {2 * m * n * k, n * k * weight_bytes + m * (n + k) * activation_bytes, 0,
          gemm_idle_flops(m, n, k, tiling)};
}

// Decode attention of `sequences` new tokens whose contexts sum to `context_tokens`: Q.K^T
// and P.V over every cached key (2 FLOPs per multiply-add, two matmuls); streams the KV
// cache, reads Q, writes the output and appends the new K and V.
inline KernelWork decode_attention_work(double sequences, double context_tokens, double q_width,
                                        double kv_width, double activation_bytes,
                                        double kv_bytes) noexcept {
  return {4 * q_width * context_tokens,
          context_tokens * 2 * kv_width * kv_bytes +
              sequences * (2 * q_width * activation_bytes + 2 * kv_width * kv_bytes)};
}

// Prefill attention of chunks totalling `chunk_tokens` whose keys (cached plus chunk) total
// `context_tokens`, with `pairs` query-key pairs under the causal mask and `masked_pairs`
// above it (see BatchShape).
inline KernelWork prefill_attention_work(double chunk_tokens, double context_tokens, double pairs,
                                         double masked_pairs, double q_width, double kv_width,
                                         double activation_bytes, double kv_bytes) noexcept {
  return {4 * q_width * pairs,
          chunk_tokens * 2 * q_width * activation_bytes + context_tokens * 2 * kv_width * kv_bytes +
              chunk_tokens * 2 * kv_width * kv_bytes,
          4 * q_width * masked_pairs};
}

}  // namespace servesim
