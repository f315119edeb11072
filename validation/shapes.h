#pragma once

#include <cstdint>
#include <string>

#include "validation/half_precision.h"
#include "validation/quantized_formats.h"

namespace servesim::validation {

// One GEMM kernel call: C[m x n] = A[m x k] . W[n x k]^T, activations A of m tokens against
// a weight W stored row-major as [n x k] (the "TN" layout of serving engines).
struct GemmShape {
  std::string op;  // "qkv", "o", "mlp_up", "mlp_down", "lm_head"
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  ElementType dtype = ElementType::BF16;  // the output's, and the operands' unless fp8
  // A and W in fp8 e4m3 with one fp32 scale per tensor each, through cuBLASLt (`gemm --dtype
  // fp8`, fp8_gemm_layout.h); dtype is then the output format.
  bool fp8 = false;
};

// One GEMV-sized GEMM with narrow weights (`quant-gemm`), in the layout of GemmShape: gemm.dtype
// is the 16-bit output format (and, for int4, the activations' and scales' format); fp8 takes
// e4m3 activations. group_size is int4's scale group along k.
struct QuantGemmShape {
  GemmShape gemm;
  WeightFormat format = WeightFormat::Int4;
  std::int64_t group_size = 128;
};

// One grouped MoE GEMM launch (`moe-gemm`): `tokens` tokens routed top_k over `experts` experts
// of [n x k] weights each; a routed row reads activation row pair / top_k (mlp_up: the token's
// hidden state) or row pair (mlp_down: the pair's own intermediate activation), and each
// touched expert's rows are padded to tiles of tile_rows.
struct MoeGemmShape {
  std::string op;  // "mlp_up" or "mlp_down"
  std::int64_t tokens = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t tile_rows = 16;
  bool activation_per_pair = false;  // mlp_down
  std::uint64_t seed = 1;            // routing
  ElementType dtype = ElementType::BF16;
};

// The head geometry of one GPU shard of an attention layer.
struct HeadShape {
  std::int64_t num_heads = 0;  // query heads
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
};

// One decode-attention kernel call: `batch` sequences of `context_tokens` keys each, one
// query token per sequence. block_size 0 means a contiguous KV cache.
struct DecodeAttentionShape {
  std::int64_t batch = 0;
  std::int64_t context_tokens = 0;
  HeadShape heads;
  std::int64_t block_size = 0;
  ElementType dtype = ElementType::BF16;
};

// One prefill-attention kernel call: `batch` chunks of `chunk_tokens` queries, each after
// `context_tokens` tokens already cached, under the causal mask.
struct PrefillAttentionShape {
  std::int64_t batch = 1;
  std::int64_t chunk_tokens = 0;
  std::int64_t context_tokens = 0;
  HeadShape heads;
  ElementType dtype = ElementType::BF16;
};

}  // namespace servesim::validation
