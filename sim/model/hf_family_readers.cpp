#include "sim/model/hf_family_readers.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace servesim {
namespace {

// A list of one integer per layer (mlp_only_layers, no_rope_layers, ...), range-checked.
std::vector<std::int64_t> per_layer_integers(JsonObjectReader& r, const char* key) {
  std::vector<std::int64_t> values;
  const nlohmann::json* list = r.optional_raw(key);
  if (list == nullptr || list->is_null()) return values;
  if (!list->is_array()) r.fail(key, "expected a list of integers");
  for (const auto& v : *list) {
    if (!v.is_number_integer()) r.fail(key, "expected a list of integers");
    values.push_back(v.get<std::int64_t>());
  }
  return values;
}

// layer_types: "full_attention", "sliding_attention", "chunked_attention",
// "linear_attention", one per layer.
std::optional<std::vector<LayerAttention>> read_layer_types(JsonObjectReader& r,
                                                            std::int64_t layers) {
  const nlohmann::json* list = r.optional_raw("layer_types");
  if (list == nullptr || list->is_null()) return std::nullopt;
  if (!list->is_array() || static_cast<std::int64_t>(list->size()) != layers) {
    r.fail("layer_types",
           "expected a list of " + std::to_string(layers) + " layer types (num_hidden_layers)");
  }
  std::vector<LayerAttention> kinds;
  for (const auto& v : *list) {
    const std::string name = v.is_string() ? v.get<std::string>() : std::string();
    if (name == "full_attention") {
      kinds.push_back(LayerAttention::Full);
    } else if (name == "sliding_attention") {
      kinds.push_back(LayerAttention::SlidingWindow);
    } else if (name == "chunked_attention") {
      kinds.push_back(LayerAttention::ChunkedLocal);
    } else if (name == "linear_attention") {
      kinds.push_back(LayerAttention::LinearRecurrent);
    } else {
      r.fail("layer_types", "unknown layer type \"" + name +
                                "\" (known: full_attention, sliding_attention, "
                                "chunked_attention, linear_attention)");
    }
  }
  return kinds;
}

void read_head_dim(JsonObjectReader& r, ModelSpec& m) {
  if (const auto head_dim = r.optional_positive_integer("head_dim")) {
    m.head_dim = *head_dim;
    return;
  }
  if (m.hidden_size % m.num_heads != 0) {
    r.fail("num_attention_heads", std::to_string(m.num_heads) +
                                      " heads do not divide hidden_size " +
                                      std::to_string(m.hidden_size));
  }
  m.head_dim = m.hidden_size / m.num_heads;
}

void read_common_dimensions(JsonObjectReader& r, ModelSpec& m) {
  m.num_layers = r.positive_integer("num_hidden_layers");
  m.hidden_size = r.positive_integer("hidden_size");
  m.num_heads = r.positive_integer("num_attention_heads");
  m.num_kv_heads = r.optional_positive_integer("num_key_value_heads").value_or(m.num_heads);
  m.vocab_size = r.positive_integer("vocab_size");
  m.max_position_embeddings = r.positive_integer("max_position_embeddings");
  m.mlp = MlpKind::Gated;
  m.norm = NormKind::RmsNorm;
}

// Every layer whose attention uses the window, for files without layer_types.
void window_every_layer(ModelSpec& m) {
  if (m.sliding_window_tokens) {
    m.layer_attention.assign(static_cast<std::size_t>(m.num_layers), LayerAttention::SlidingWindow);
  }
}

void read_llama_like(JsonObjectReader& r, ModelSpec& m) {
  read_common_dimensions(r, m);
  m.intermediate_size = r.positive_integer("intermediate_size");
  m.tied_embeddings = r.optional_boolean("tie_word_embeddings").value_or(false);
  const bool attention_bias =
      r.optional_boolean("attention_bias").value_or(m.family == ModelFamily::Qwen2);
  m.qkv_bias = attention_bias;
  // Llama's attention_bias biases the output projection too; Qwen2's biases Q, K, V only.
  m.o_bias = attention_bias && m.family != ModelFamily::Qwen2;
  m.output_and_mlp_bias = r.optional_boolean("mlp_bias").value_or(false);
  read_head_dim(r, m);
  // Qwen configs carry a sliding_window that applies only when use_sliding_window is true.
  const bool window_enabled = r.optional_boolean("use_sliding_window").value_or(true);
  const auto window = r.optional_positive_integer("sliding_window");
  if (window && window_enabled) m.sliding_window_tokens = window;
  window_every_layer(m);
  if (m.family == ModelFamily::Mixtral) {
    m.num_experts = r.positive_integer("num_local_experts");
    m.experts_per_token = r.positive_integer("num_experts_per_tok");
  }
  if (m.family == ModelFamily::Qwen3) m.qk_norm = true;
}

// Qwen3 MoE and Qwen3-Next: experts of moe_intermediate_size; the layers in mlp_only_layers,
// and those off the decoder_sparse_step, keep a dense MLP of intermediate_size.
void read_qwen3_experts(JsonObjectReader& r, ModelSpec& m) {
  m.dense_intermediate_size = m.intermediate_size;
  m.intermediate_size = r.positive_integer("moe_intermediate_size");
  m.num_experts = r.positive_integer("num_experts");
  m.experts_per_token = r.positive_integer("num_experts_per_tok");
  const std::int64_t step = r.optional_positive_integer("decoder_sparse_step").value_or(1);
  const std::vector<std::int64_t> dense = per_layer_integers(r, "mlp_only_layers");
  m.moe_layers.assign(static_cast<std::size_t>(m.num_layers), false);
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    bool is_dense = (i + 1) % step != 0;
    for (const std::int64_t d : dense)
      is_dense = is_dense || d == i;
    m.moe_layers[static_cast<std::size_t>(i)] = !is_dense;
  }
  m.qk_norm = true;
}

void read_qwen3_next(JsonObjectReader& r, ModelSpec& m) {
  read_qwen3_experts(r, m);
  m.shared_experts = 1;
  m.shared_expert_intermediate_size = r.positive_integer("shared_expert_intermediate_size");
  m.shared_expert_gate = true;
  m.attention_output_gate = true;
  LinearAttentionDims d;
  d.num_key_heads = r.positive_integer("linear_num_key_heads");
  d.num_value_heads = r.positive_integer("linear_num_value_heads");
  d.key_head_dim = r.positive_integer("linear_key_head_dim");
  d.value_head_dim = r.positive_integer("linear_value_head_dim");
  d.conv_kernel = r.positive_integer("linear_conv_kernel_dim");
  if (d.num_value_heads % d.num_key_heads != 0) {
    r.fail("linear_num_value_heads",
           "expected a multiple of linear_num_key_heads (" + std::to_string(d.num_key_heads) + ")");
  }
  m.linear_attention = d;
  m.layer_attention.clear();
  if (auto kinds = read_layer_types(r, m.num_layers)) {
    m.layer_attention = std::move(*kinds);
  } else {
    const std::int64_t interval =
        r.optional_positive_integer("full_attention_interval").value_or(4);
    for (std::int64_t i = 0; i < m.num_layers; ++i) {
      m.layer_attention.push_back((i + 1) % interval == 0 ? LayerAttention::Full
                                                          : LayerAttention::LinearRecurrent);
    }
  }
  m.mtp_layers = r.optional_nonnegative_integer("mtp_num_hidden_layers").value_or(0);
}

void read_gpt_oss(JsonObjectReader& r, ModelSpec& m) {
  m.num_experts = r.positive_integer("num_local_experts");
  m.experts_per_token = r.has("num_experts_per_tok") ? r.positive_integer("num_experts_per_tok")
                                                     : r.positive_integer("experts_per_token");
  r.ignore("experts_per_token");
  m.router_bias = true;
  m.expert_bias = true;
  m.attention_sinks = true;
  m.sliding_window_tokens = r.positive_integer("sliding_window");
  m.layer_attention.clear();
  if (auto kinds = read_layer_types(r, m.num_layers)) {
    m.layer_attention = std::move(*kinds);
  } else {
    // The reference alternates: windowed layers first.
    for (std::int64_t i = 0; i < m.num_layers; ++i) {
      m.layer_attention.push_back(i % 2 == 0 ? LayerAttention::SlidingWindow
                                             : LayerAttention::Full);
    }
  }
}

void read_gemma3(JsonObjectReader& r, ModelSpec& m) {
  read_common_dimensions(r, m);
  m.intermediate_size = r.positive_integer("intermediate_size");
  m.head_dim = r.optional_positive_integer("head_dim").value_or(256);
  m.tied_embeddings = r.optional_boolean("tie_word_embeddings").value_or(true);
  m.qkv_bias = r.optional_boolean("attention_bias").value_or(false);
  m.o_bias = m.qkv_bias;
  m.qk_norm = true;
  m.norms_per_layer = 4;
  m.sliding_window_tokens = r.positive_integer("sliding_window");
  if (auto kinds = read_layer_types(r, m.num_layers)) {
    m.layer_attention = std::move(*kinds);
  } else {
    // Five local layers per global one: layer i is global when (i + 1) % pattern == 0.
    const std::int64_t pattern = r.optional_positive_integer("sliding_window_pattern").value_or(6);
    for (std::int64_t i = 0; i < m.num_layers; ++i) {
      m.layer_attention.push_back((i + 1) % pattern == 0 ? LayerAttention::Full
                                                         : LayerAttention::SlidingWindow);
    }
  }
}

void read_llama4(JsonObjectReader& r, ModelSpec& m) {
  read_common_dimensions(r, m);
  read_head_dim(r, m);
  m.intermediate_size = r.positive_integer("intermediate_size");  // per expert
  m.dense_intermediate_size =
      r.optional_positive_integer("intermediate_size_mlp").value_or(m.intermediate_size);
  m.num_experts = r.positive_integer("num_local_experts");
  m.experts_per_token = r.positive_integer("num_experts_per_tok");
  m.shared_experts = 1;
  m.shared_expert_intermediate_size = m.intermediate_size;
  m.tied_embeddings = r.optional_boolean("tie_word_embeddings").value_or(false);
  m.qkv_bias = r.optional_boolean("attention_bias").value_or(false);
  m.o_bias = m.qkv_bias;
  // use_qk_norm is an L2 norm without weights: nothing to count.
  m.moe_layers.assign(static_cast<std::size_t>(m.num_layers), false);
  const std::vector<std::int64_t> moe = per_layer_integers(r, "moe_layers");
  const std::int64_t step = r.optional_positive_integer("interleave_moe_layer_step").value_or(1);
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    bool is_moe = moe.empty() ? (i + 1) % step == 0 : false;
    for (const std::int64_t layer : moe)
      is_moe = is_moe || layer == i;
    m.moe_layers[static_cast<std::size_t>(i)] = is_moe;
  }
  m.attention_chunk_tokens = r.optional_positive_integer("attention_chunk_size");
  // no_rope_layers[i] == 0 marks a NoPE layer, which attends globally; the RoPE layers
  // attend within their chunk. Without the list, every fourth layer is NoPE.
  const std::vector<std::int64_t> rope = per_layer_integers(r, "no_rope_layers");
  if (!rope.empty() && static_cast<std::int64_t>(rope.size()) != m.num_layers) {
    r.fail("no_rope_layers", "expected " + std::to_string(m.num_layers) + " entries");
  }
  const std::int64_t interval = r.optional_positive_integer("no_rope_layer_interval").value_or(4);
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const bool nope =
        rope.empty() ? (i + 1) % interval == 0 : rope[static_cast<std::size_t>(i)] == 0;
    m.layer_attention.push_back(!nope && m.attention_chunk_tokens ? LayerAttention::ChunkedLocal
                                                                  : LayerAttention::Full);
  }
}

void read_deepseek(JsonObjectReader& r, ModelSpec& m) {
  read_common_dimensions(r, m);
  MlaDims d;
  d.q_lora_rank = r.optional_positive_integer("q_lora_rank").value_or(0);
  d.kv_lora_rank = r.positive_integer("kv_lora_rank");
  d.qk_nope_head_dim = r.positive_integer("qk_nope_head_dim");
  d.qk_rope_head_dim = r.positive_integer("qk_rope_head_dim");
  d.v_head_dim = r.positive_integer("v_head_dim");
  m.mla = d;
  // Every head rebuilds its K and V from the latent: the config's KV head count is the
  // query head count; the cache holds one latent per token (see kv_spec.h).
  m.num_kv_heads = m.num_heads;
  m.head_dim = d.qk_nope_head_dim + d.qk_rope_head_dim;
  m.dense_intermediate_size = r.positive_integer("intermediate_size");
  m.tied_embeddings = r.optional_boolean("tie_word_embeddings").value_or(false);
  const std::int64_t routed = r.optional_nonnegative_integer("n_routed_experts").value_or(0);
  if (routed == 0) {
    m.intermediate_size = m.dense_intermediate_size;
    m.dense_intermediate_size = 0;
  } else {
    m.num_experts = routed;
    m.intermediate_size = r.positive_integer("moe_intermediate_size");
    m.experts_per_token = r.positive_integer("num_experts_per_tok");
    m.shared_experts = r.optional_nonnegative_integer("n_shared_experts").value_or(0);
    m.shared_expert_intermediate_size = m.intermediate_size;
    const std::int64_t first_dense =
        r.optional_nonnegative_integer("first_k_dense_replace").value_or(0);
    const std::int64_t frequency = r.optional_positive_integer("moe_layer_freq").value_or(1);
    m.moe_layers.assign(static_cast<std::size_t>(m.num_layers), false);
    for (std::int64_t i = 0; i < m.num_layers; ++i) {
      m.moe_layers[static_cast<std::size_t>(i)] = i >= first_dense && i % frequency == 0;
    }
    // DeepSeek-V3's aux-loss-free routing keeps a correction bias per expert.
    m.router_correction_bias = r.optional_string("topk_method").value_or("") == "noaux_tc";
  }
  m.mtp_layers = r.optional_nonnegative_integer("num_nextn_predict_layers").value_or(0);
}

void read_opt(JsonObjectReader& r, ModelSpec& m) {
  m.num_layers = r.positive_integer("num_hidden_layers");
  m.hidden_size = r.positive_integer("hidden_size");
  m.num_heads = r.positive_integer("num_attention_heads");
  m.num_kv_heads = m.num_heads;
  m.intermediate_size = r.positive_integer("ffn_dim");
  m.vocab_size = r.positive_integer("vocab_size");
  m.max_position_embeddings = r.positive_integer("max_position_embeddings");
  m.tied_embeddings = r.optional_boolean("tie_word_embeddings").value_or(true);
  m.mlp = MlpKind::Plain;
  m.norm = NormKind::LayerNorm;
  const bool bias = r.optional_boolean("enable_bias").value_or(true);
  m.qkv_bias = bias;
  m.o_bias = bias;
  m.output_and_mlp_bias = bias;
  // OPT's learned positions keep two extra rows (the padding offset).
  m.position_embedding_rows = m.max_position_embeddings + 2;
  if (m.hidden_size % m.num_heads != 0) {
    r.fail("num_attention_heads", std::to_string(m.num_heads) +
                                      " heads do not divide hidden_size " +
                                      std::to_string(m.hidden_size));
  }
  m.head_dim = m.hidden_size / m.num_heads;
  if (const auto projection = r.optional_positive_integer("word_embed_proj_dim");
      projection && *projection != m.hidden_size) {
    r.fail("word_embed_proj_dim", "a projected embedding (" + std::to_string(*projection) +
                                      " != hidden_size " + std::to_string(m.hidden_size) +
                                      ") is not supported");
  }
}

}  // namespace

void read_model_family(JsonObjectReader& r, ModelSpec& m) {
  switch (m.family) {
    case ModelFamily::Opt:
      read_opt(r, m);
      return;
    case ModelFamily::DeepseekV2:
    case ModelFamily::DeepseekV3:
      read_deepseek(r, m);
      return;
    case ModelFamily::Gemma3:
      read_gemma3(r, m);
      return;
    case ModelFamily::Llama4:
      read_llama4(r, m);
      return;
    case ModelFamily::GptOss:
      read_llama_like(r, m);
      read_gpt_oss(r, m);
      return;
    case ModelFamily::Qwen3Moe:
      read_llama_like(r, m);
      read_qwen3_experts(r, m);
      return;
    case ModelFamily::Qwen3Next:
      read_llama_like(r, m);
      read_qwen3_next(r, m);
      return;
    default:
      read_llama_like(r, m);
      return;
  }
}

}  // namespace servesim
