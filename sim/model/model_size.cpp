#include "sim/model/model_size.h"

#include <algorithm>

namespace servesim {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Parameters of one decoder layer on one GPU of a TP group, split by how quantization treats
// them. Attention heads, expert widths and recurrent heads split across TP ranks; MLA's
// down-projections (q_a, kv_a) are replicated on every rank, as vLLM runs them.

void add_attention(const ModelSpec& m, const ShardShape& s, std::int64_t tp, LayerAttention kind,
                   LayerParameters& p) {
  const std::int64_t hidden = s.hidden;
  if (kind == LayerAttention::LinearRecurrent) {
    const LinearAttentionDims& d = *m.linear_attention;
    const std::int64_t key = d.key_width() / tp;
    const std::int64_t value = d.value_width() / tp;
    const std::int64_t value_heads = d.num_value_heads / tp;
    // in_proj_qkvz (Q, K, V and the output gate z), in_proj_ba (beta and the decay a) and the
    // output projection; a depthwise convolution over Q, K and V, the decay's bias and log
    // scale per value head, and the gated norm over a value head.
    p.attention_linear +=
        hidden * (2 * key + 2 * value) + hidden * 2 * value_heads + value * hidden;
    p.attention_out += value * hidden;
    p.other += (2 * key + value) * d.conv_kernel + 2 * value_heads + d.value_head_dim;
    return;
  }
  if (m.mla) {
    const MlaDims& d = *m.mla;
    const std::int64_t heads = s.heads;
    const std::int64_t q_head = d.qk_nope_head_dim + d.qk_rope_head_dim;
    if (d.q_lora_rank > 0) {
      p.attention_linear += hidden * d.q_lora_rank + d.q_lora_rank * heads * q_head;
      p.other += d.q_lora_rank;  // q_a_layernorm
    } else {
      p.attention_linear += hidden * heads * q_head;
    }
    p.attention_linear += hidden * (d.kv_lora_rank + d.qk_rope_head_dim) +
                          d.kv_lora_rank * heads * (d.qk_nope_head_dim + d.v_head_dim) +
                          heads * d.v_head_dim * hidden;
    p.attention_out += heads * d.v_head_dim * hidden;
    p.other += d.kv_lora_rank;  // kv_a_layernorm
    return;
  }
  const std::int64_t q_width = s.heads * s.head_dim;
  const std::int64_t kv_width = 2 * s.kv_heads * s.head_dim;
  const std::int64_t q_out = q_width * (m.attention_output_gate ? 2 : 1);
  p.attention_linear += hidden * (q_out + kv_width) + q_width * hidden;
  p.attention_out += q_width * hidden;
  if (m.qkv_bias) p.other += q_out + kv_width;
  if (m.o_bias) p.other += hidden;
  if (m.qk_norm) p.other += 2 * s.head_dim;
  if (m.attention_sinks) p.other += s.heads;
}

void add_mlp(const ModelSpec& m, const ShardShape& s, std::int64_t tp, bool moe,
             LayerParameters& p) {
  const std::int64_t hidden = s.hidden;
  const std::int64_t matrices = m.mlp == MlpKind::Gated ? 3 : 2;
  const std::int64_t up_rows = m.mlp == MlpKind::Gated ? 2 : 1;
  if (!moe) {
    const std::int64_t width = ceil_div(m.dense_mlp_width(), tp);
    p.mlp_linear_total += matrices * hidden * width;
    p.mlp_linear_active += matrices * hidden * width;
    if (m.output_and_mlp_bias) p.other += up_rows * width + hidden;
    return;
  }
  const std::int64_t expert = matrices * hidden * s.intermediate;
  const std::int64_t shared =
      m.shared_experts * matrices * hidden * ceil_div(m.shared_expert_intermediate_size, tp);
  p.mlp_linear_total += s.experts_held * expert + shared;
  p.mlp_linear_active += s.experts_per_token * expert + shared;
  p.other += hidden * s.experts;  // router
  if (m.router_bias) p.other += s.experts;
  if (m.router_correction_bias) p.other += s.experts;
  if (m.shared_expert_gate) p.other += hidden;
  if (m.expert_bias || m.output_and_mlp_bias) {
    const std::int64_t bias = up_rows * s.intermediate + hidden;
    p.other += s.experts_held * bias;
    p.other_unrouted += (s.experts - s.experts_per_token) * bias;
  }
}

LayerParameters layer_parameters(const ModelSpec& m, const ShardShape& s, std::int64_t tp,
                                 std::int64_t layer) {
  LayerParameters p;
  add_attention(m, s, tp, m.attention_of(layer), p);
  add_mlp(m, s, tp, m.moe_layer(layer), p);
  const std::int64_t norm_vectors = m.norm == NormKind::RmsNorm ? 1 : 2;  // weight (+ bias)
  p.other += m.norms_per_layer * norm_vectors * s.hidden;
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

// Parameters of one stage, by how they are stored.
struct StageParameters {
  std::int64_t attention_linear = 0;
  std::int64_t mlp_linear = 0;
  std::int64_t other = 0;
};

double bytes_of(const StageParameters& p, const LinearBytes& b) {
  return static_cast<double>(p.attention_linear) * b.attention +
         static_cast<double>(p.mlp_linear) * b.mlp + static_cast<double>(p.other) * b.other;
}

}  // namespace

LayerParameters layer_parameters_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                         std::int64_t layer) {
  return layer_parameters(model, shard_model(model, parallelism), parallelism.tensor, layer);
}

LinearBytes linear_bytes(const ModelSpec& model, DType weight_dtype) {
  LinearBytes b;
  b.other = is_quantized(weight_dtype) ? 2.0 : bytes_per_element(weight_dtype);
  if (model.quantization && model.quantization->dtype == weight_dtype) {
    const WeightQuantization& q = *model.quantization;
    b.mlp = q.bytes_per_parameter();
    b.attention = q.attention_unquantized ? 2.0 : b.mlp;
  } else {
    b.mlp = bytes_per_element(weight_dtype);
    b.attention = b.mlp;
  }
  return b;
}

ParameterCounts count_parameters(const ModelSpec& model) {
  const ShardShape whole = shard_model(model, Parallelism{});
  ParameterCounts c;
  std::int64_t other = 0;
  std::int64_t unrouted = 0;
  for (std::int64_t i = 0; i < model.num_layers; ++i) {
    const LayerParameters layer = layer_parameters(model, whole, 1, i);
    c.attention_linear += layer.attention_linear;
    c.linear_total += layer.linear_total();
    c.linear_active += layer.attention_linear + layer.mlp_linear_active;
    other += layer.other;
    unrouted += layer.other_unrouted;
  }
  const EdgeParameters edges = edge_parameters(model, whole, 1);
  other += edges.first_stage + edges.last_stage;
  c.total = c.linear_total + other;
  c.active = c.linear_active + other - unrouted;
  c.embedding = model.vocab_size * model.hidden_size;
  if (model.mtp_layers > 0) {
    // Each MTP layer: a decoder layer like the last one, the projection of [embedding;
    // hidden] back to hidden, its two input norms and its head's norm, and the embedding
    // and LM head the checkpoint stores again with it.
    const LayerParameters layer = layer_parameters(model, whole, 1, model.num_layers - 1);
    const std::int64_t h = model.hidden_size;
    c.mtp = model.mtp_layers *
            (layer.linear_total() + layer.other + 2 * h * h + 3 * h + 2 * model.vocab_size * h);
  }
  return c;
}

double weight_bytes(const ModelSpec& model, DType weight_dtype) {
  const ParameterCounts c = count_parameters(model);
  StageParameters p;
  p.attention_linear = c.attention_linear;
  p.mlp_linear = c.linear_total - c.attention_linear;
  p.other = c.total - c.linear_total;
  return bytes_of(p, linear_bytes(model, weight_dtype));
}

double weight_bytes_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                            DType weight_dtype) {
  const ShardShape shard = shard_model(model, parallelism);
  const EdgeParameters edges = edge_parameters(model, shard, parallelism.pipeline);
  const LinearBytes bytes = linear_bytes(model, weight_dtype);
  double largest = 0;
  for (std::int64_t stage = 0; stage < parallelism.pipeline; ++stage) {
    StageParameters p;
    const std::int64_t begin = stage * shard.layers;
    const std::int64_t end = std::min(model.num_layers, begin + shard.layers);
    for (std::int64_t i = begin; i < end; ++i) {
      const LayerParameters layer = layer_parameters(model, shard, parallelism.tensor, i);
      p.attention_linear += layer.attention_linear;
      p.mlp_linear += layer.mlp_linear_total;
      p.other += layer.other;
    }
    if (stage == 0) p.other += edges.first_stage;
    if (stage == parallelism.pipeline - 1) p.other += edges.last_stage;
    largest = std::max(largest, bytes_of(p, bytes));
  }
  return largest;
}

}  // namespace servesim
