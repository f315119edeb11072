#pragma once

#include <cstdint>

#include "sim/model/dtype.h"
#include "sim/model/kv_spec.h"  // kv_bytes_per_token, with the layer groups it sums
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"

namespace servesim {

// Parameter counts of a whole model. "Linear" parameters are the weight matrices of the
// transformer layers (attention projections, the MLP, routed and shared experts): the ones
// weight quantization (GPTQ, AWQ, fp8, MXFP4, NVFP4) stores in the narrow format.
// Embeddings, the LM head, norms, biases, attention sinks, convolution taps and the MoE
// router stay in 16 bits under quantization.
struct ParameterCounts {
  std::int64_t total = 0;
  std::int64_t active = 0;  // per token: only the routed experts of an MoE layer count
  std::int64_t linear_total = 0;
  std::int64_t linear_active = 0;
  std::int64_t attention_linear = 0;  // of linear_total: the attention (or recurrent) mixers
  // Multi-token-prediction layers stored beside the model (DeepSeek-V3: its MTP module with
  // the copies of the embedding and head it ships): not in total, which is the model a
  // serving engine runs without speculative decoding.
  std::int64_t mtp = 0;
  // The token embedding table (a lookup, no FLOPs): published "active" figures often leave
  // it out.
  std::int64_t embedding = 0;
};

ParameterCounts count_parameters(const ModelSpec& model);

// Bytes of all weights stored in `weight_dtype`. When the model is a quantized checkpoint
// and `weight_dtype` is its format, the quantization's scales and zero points are counted,
// and the modules it leaves unconverted stay 16-bit; any other narrow dtype quantizes every
// linear parameter without scales.
double weight_bytes(const ModelSpec& model, DType weight_dtype);

// Bytes of weights one GPU holds: its tensor-parallel slice of the largest pipeline stage
// (the first stage holds the embeddings, the last the final norm and LM head).
double weight_bytes_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                            DType weight_dtype);

// Bytes per linear parameter in `weight_dtype` for this model (scales included for its own
// quantized format; see weight_bytes), for attention and for the MLP / experts.
struct LinearBytes {
  double attention = 2;
  double mlp = 2;
  double other = 2;  // embeddings, norms, biases, router
};
LinearBytes linear_bytes(const ModelSpec& model, DType weight_dtype);

// Parameters of one decoder layer on one GPU of its TP group, split by how quantization
// treats them: attention heads, expert widths and recurrent heads split across TP ranks;
// MLA's down projections (q_a, kv_a) are replicated on every rank, as vLLM runs them.
struct LayerParameters {
  std::int64_t attention_linear = 0;  // every attention (or recurrent mixer) matrix
  std::int64_t attention_out = 0;     // of which the output projection
  std::int64_t mlp_linear_total = 0;
  std::int64_t mlp_linear_active = 0;
  std::int64_t other = 0;
  std::int64_t other_unrouted = 0;  // of other: biases of the experts a token does not use
  std::int64_t linear_total() const noexcept { return attention_linear + mlp_linear_total; }
};
LayerParameters layer_parameters_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                         std::int64_t layer);

}  // namespace servesim
