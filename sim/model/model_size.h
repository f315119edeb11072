#pragma once

#include <cstdint>

#include "sim/model/dtype.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"

namespace servesim {

// Parameter counts of a whole model. "Linear" parameters are the weight matrices of the
// transformer layers (Q, K, V, O and the MLP or experts): the ones weight-only quantization
// (GPTQ, AWQ, fp8) stores in the narrow format. Embeddings, the LM head, norms, biases and
// the MoE router stay in 16 bits under quantization.
struct ParameterCounts {
  std::int64_t total = 0;
  std::int64_t active = 0;  // per token: only the routed experts of an MoE layer count
  std::int64_t linear_total = 0;
  std::int64_t linear_active = 0;
};

ParameterCounts count_parameters(const ModelSpec& model);

// Bytes of all weights stored in `weight_dtype` (quantized formats: see ParameterCounts).
double weight_bytes(const ModelSpec& model, DType weight_dtype);

// Bytes of weights one GPU holds: its tensor-parallel slice of the largest pipeline stage
// (the first stage holds the embeddings, the last the final norm and LM head).
double weight_bytes_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                            DType weight_dtype);

// K and V of one token across all layers: 2 x layers x kv_heads x head_dim x bytes.
double kv_bytes_per_token(const ModelSpec& model, DType kv_dtype);

// The share of one token's K and V that one GPU stores: its KV heads (replicated when TP
// exceeds the KV head count) of its pipeline stage's layers.
double kv_bytes_per_token_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                  DType kv_dtype);

}  // namespace servesim
