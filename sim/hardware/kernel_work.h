#pragma once

namespace servesim {

// FLOPs and HBM bytes of one kernel. The roofline model and calibration both count work with
// these functions, so a profile fitted to measured kernels prices the simulator's kernels
// the same way.
struct KernelWork {
  double flops = 0;
  double bytes = 0;
  double masked_flops = 0;  // attention: FLOPs of the pairs the causal mask hides
};

// An [m x k] activation times a [k x n] weight: the weight is read once, the activation in
// and the result out.
inline KernelWork gemm_work(double m, double n, double k, double weight_bytes,
                            double activation_bytes) noexcept {
  return {2 * m * n * k, n * k * weight_bytes + m * (n + k) * activation_bytes};
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
