#include "sim/model/model_size.h"

#include <algorithm>

namespace servesim {
namespace {

// Parameters of one decoder layer of one shard, split by whether quantization applies.
struct LayerParameters {
  std::int64_t linear_total = 0;
  std::int64_t linear_active = 0;
  std::int64_t other = 0;
};

LayerParameters layer_parameters(const ModelSpec& m, const ShardShape& s) {
  const std::int64_t qkv_width = (s.heads + 2 * s.kv_heads) * s.head_dim;
  const std::int64_t attention = s.hidden * qkv_width + s.heads * s.head_dim * s.hidden;
  const std::int64_t matrices_per_expert = m.mlp == MlpKind::Gated ? 3 : 2;
  const std::int64_t expert = matrices_per_expert * s.hidden * s.intermediate;

  LayerParameters p;
  p.linear_total = attention + s.experts * expert;
  p.linear_active = attention + s.experts_per_token * expert;
  if (m.qkv_bias) p.other += qkv_width;
  if (m.output_and_mlp_bias) p.other += s.hidden + s.experts * (s.intermediate + s.hidden);
  if (m.is_moe()) p.other += s.hidden * s.experts;                        // router
  const std::int64_t norm_vectors = m.norm == NormKind::RmsNorm ? 1 : 2;  // weight (+ bias)
  p.other += 2 * norm_vectors * s.hidden;                                 // two norms per layer
  return p;
}

struct EdgeParameters {
  std::int64_t first_stage = 0;  // token (and position) embeddings
  std::int64_t last_stage = 0;   // final norm and LM head
};

EdgeParameters edge_parameters(const ModelSpec& m, const ShardShape& s, std::int64_t pipeline) {
  EdgeParameters e;
  e.first_stage = s.vocab * s.hidden + m.position_embedding_rows * s.hidden;
  const std::int64_t norm_vectors = m.norm == NormKind::RmsNorm ? 1 : 2;
  e.last_stage = norm_vectors * s.hidden;
  // A tied LM head shares the embedding matrix only when both live on the same GPU.
  if (!m.tied_embeddings || pipeline > 1) e.last_stage += s.vocab * s.hidden;
  return e;
}

double bytes_of(std::int64_t linear, std::int64_t other, DType dtype) {
  const double other_bytes = is_quantized(dtype) ? 2.0 : bytes_per_element(dtype);
  return static_cast<double>(linear) * bytes_per_element(dtype) +
         static_cast<double>(other) * other_bytes;
}

}  // namespace

ParameterCounts count_parameters(const ModelSpec& model) {
  const ShardShape whole = shard_model(model, Parallelism{});
  const LayerParameters layer = layer_parameters(model, whole);
  const EdgeParameters edges = edge_parameters(model, whole, 1);
  ParameterCounts c;
  c.linear_total = layer.linear_total * model.num_layers;
  c.linear_active = layer.linear_active * model.num_layers;
  const std::int64_t other = layer.other * model.num_layers + edges.first_stage + edges.last_stage;
  c.total = c.linear_total + other;
  c.active = c.linear_active + other;
  return c;
}

double weight_bytes(const ModelSpec& model, DType weight_dtype) {
  const ParameterCounts c = count_parameters(model);
  return bytes_of(c.linear_total, c.total - c.linear_total, weight_dtype);
}

double weight_bytes_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                            DType weight_dtype) {
  const ShardShape shard = shard_model(model, parallelism);
  const LayerParameters layer = layer_parameters(model, shard);
  const EdgeParameters edges = edge_parameters(model, shard, parallelism.pipeline);
  const std::int64_t edge = parallelism.pipeline == 1
                                ? edges.first_stage + edges.last_stage
                                : std::max(edges.first_stage, edges.last_stage);
  return bytes_of(layer.linear_total * shard.layers, layer.other * shard.layers + edge,
                  weight_dtype);
}

double kv_bytes_per_token(const ModelSpec& model, DType kv_dtype) {
  return 2.0 * static_cast<double>(model.num_layers * model.num_kv_heads * model.head_dim) *
         bytes_per_element(kv_dtype);
}

double kv_bytes_per_token_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                  DType kv_dtype) {
  const ShardShape s = shard_model(model, parallelism);
  return 2.0 * static_cast<double>(s.layers * s.kv_heads * s.head_dim) *
         bytes_per_element(kv_dtype);
}

}  // namespace servesim
