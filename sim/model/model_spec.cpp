#include "sim/model/model_spec.h"

#include "sim/core/error.h"

namespace servesim {

std::string_view family_name(ModelFamily family) noexcept {
  switch (family) {
    case ModelFamily::Llama:
      return "llama";
    case ModelFamily::Mistral:
      return "mistral";
    case ModelFamily::Mixtral:
      return "mixtral";
    case ModelFamily::Qwen2:
      return "qwen2";
    case ModelFamily::Opt:
      return "opt";
    case ModelFamily::Qwen3:
      return "qwen3";
    case ModelFamily::Qwen3Moe:
      return "qwen3_moe";
    case ModelFamily::Qwen3Next:
      return "qwen3_next";
    case ModelFamily::DeepseekV2:
      return "deepseek_v2";
    case ModelFamily::DeepseekV3:
      return "deepseek_v3";
    case ModelFamily::GptOss:
      return "gpt_oss";
    case ModelFamily::Gemma3:
      return "gemma3";
    case ModelFamily::Llama4:
      return "llama4";
    case ModelFamily::Custom:
      return "custom";
  }
  return "?";
}

std::string_view layer_attention_name(LayerAttention kind) noexcept {
  switch (kind) {
    case LayerAttention::Full:
      return "full_attention";
    case LayerAttention::SlidingWindow:
      return "sliding_attention";
    case LayerAttention::ChunkedLocal:
      return "chunked_attention";
    case LayerAttention::LinearRecurrent:
      return "linear_attention";
  }
  return "?";
}

DType auto_weight_dtype(const ModelSpec& model) {
  if (model.quantization) return model.quantization->dtype;
  return model.native_dtype;
}

DType auto_kv_dtype(const ModelSpec& model) {
  return model.native_dtype == DType::FP32 ? DType::FP16 : model.native_dtype;
}

namespace {

// Every dimension positive and in range; the KV heads dividing the heads, the experts a token
// picks among the experts.
void validate_model_dimensions(const ModelSpec& m, const std::string& where) {
  const auto require_positive = [&](std::int64_t value, const char* field) {
    if (value <= 0) {
      throw InputError(where, std::string("field \"") + field +
                                  "\": expected a positive integer, got " + std::to_string(value));
    }
  };
  require_positive(m.num_layers, "num_hidden_layers");
  require_positive(m.hidden_size, "hidden_size");
  require_positive(m.num_heads, "num_attention_heads");
  require_positive(m.num_kv_heads, "num_key_value_heads");
  require_positive(m.head_dim, "head_dim");
  require_positive(m.intermediate_size, "intermediate_size");
  require_positive(m.vocab_size, "vocab_size");
  require_positive(m.max_position_embeddings, "max_position_embeddings");
  require_positive(m.num_experts, "num_local_experts");
  require_positive(m.experts_per_token, "num_experts_per_tok");
  // Bounds that keep every derived byte count far inside 64-bit arithmetic.
  constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;
  if (m.hidden_size > kMaxDim || m.intermediate_size > kMaxDim || m.vocab_size > kMaxDim ||
      m.num_layers > 100000 || m.num_heads > 100000 || m.num_experts > 100000 ||
      m.max_position_embeddings > (std::int64_t{1} << 30)) {
    throw InputError(where,
                     "dimensions out of range (hidden, intermediate and vocab at most 2^24, "
                     "layers, heads and experts at most 100000)");
  }
  if (m.num_heads % m.num_kv_heads != 0) {
    throw InputError(where, "field \"num_key_value_heads\": " + std::to_string(m.num_kv_heads) +
                                " KV heads do not divide " + std::to_string(m.num_heads) +
                                " attention heads");
  }
  if (m.experts_per_token > m.num_experts) {
    throw InputError(where,
                     "field \"num_experts_per_tok\": " + std::to_string(m.experts_per_token) +
                         " exceeds the " + std::to_string(m.num_experts) + " experts");
  }
}

// The window, the chunk and the per-layer lists against the layers and what they need.
void validate_layer_attention(const ModelSpec& m, const std::string& where) {
  if (m.sliding_window_tokens && *m.sliding_window_tokens <= 0) {
    throw InputError(where, "field \"sliding_window\": expected a positive integer or null");
  }
  if (m.sliding_window_tokens && *m.sliding_window_tokens > m.max_position_embeddings) {
    throw InputError(where, "field \"sliding_window\": a window of " +
                                std::to_string(*m.sliding_window_tokens) +
                                " tokens exceeds max_position_embeddings " +
                                std::to_string(m.max_position_embeddings));
  }
  if (m.attention_chunk_tokens && *m.attention_chunk_tokens > m.max_position_embeddings) {
    throw InputError(where, "field \"attention_chunk_size\": a chunk of " +
                                std::to_string(*m.attention_chunk_tokens) +
                                " tokens exceeds max_position_embeddings " +
                                std::to_string(m.max_position_embeddings));
  }
  if (!m.layer_attention.empty() &&
      static_cast<std::int64_t>(m.layer_attention.size()) != m.num_layers) {
    throw InputError(where, "field \"layer_types\": expected one entry per layer (" +
                                std::to_string(m.num_layers) + ")");
  }
  if (!m.moe_layers.empty() && static_cast<std::int64_t>(m.moe_layers.size()) != m.num_layers) {
    throw InputError(where, "MoE layer list: expected one entry per layer (" +
                                std::to_string(m.num_layers) + ")");
  }
  for (const LayerAttention kind : m.layer_attention) {
    if (kind == LayerAttention::SlidingWindow && !m.sliding_window_tokens) {
      throw InputError(where, "field \"sliding_window\": required by the sliding_attention layers");
    }
    if (kind == LayerAttention::ChunkedLocal && !m.attention_chunk_tokens) {
      throw InputError(where,
                       "field \"attention_chunk_size\": required by the chunked_attention layers");
    }
    if (kind == LayerAttention::LinearRecurrent && !m.linear_attention) {
      throw InputError(where,
                       "field \"linear_num_key_heads\": required by the "
                       "linear_attention layers");
    }
  }
  if (m.linear_attention &&
      m.linear_attention->num_value_heads % m.linear_attention->num_key_heads != 0) {
    throw InputError(where,
                     "field \"linear_num_value_heads\": expected a multiple of "
                     "linear_num_key_heads");
  }
}

}  // namespace

void validate_model(const ModelSpec& m, const std::string& where) {
  validate_model_dimensions(m, where);
  validate_layer_attention(m, where);
  if (m.shared_experts < 0 || (m.shared_experts > 0 && m.shared_expert_intermediate_size <= 0)) {
    throw InputError(where, "field \"n_shared_experts\": shared experts need a positive width");
  }
}

ModelSpec model_from_raw_dims(const RawModelDims& dims) {
  const std::string where = "command line";
  ModelSpec m;
  m.name = "custom";
  m.source = where;
  m.family = ModelFamily::Custom;
  m.num_layers = dims.num_layers;
  m.hidden_size = dims.hidden_size;
  if (dims.num_layers <= 0) throw InputError("--layers", "expected a positive integer");
  if (dims.hidden_size <= 0) throw InputError("--d-model", "expected a positive integer");
  const std::int64_t group = dims.kv_group.value_or(1);
  if (group <= 0) throw InputError("--kv-group", "expected a positive integer");

  if (dims.num_heads) {
    m.num_heads = *dims.num_heads;
    if (m.num_heads <= 0) throw InputError("--heads", "expected a positive integer");
    if (m.hidden_size % m.num_heads != 0) {
      throw InputError("--heads", std::to_string(m.num_heads) + " heads do not divide d_model " +
                                      std::to_string(m.hidden_size));
    }
  } else if (m.hidden_size % 128 == 0 && (m.hidden_size / 128) % group == 0) {
    m.num_heads = m.hidden_size / 128;
  } else {
    m.num_heads = group;
  }
  m.head_dim = m.hidden_size / m.num_heads;
  if (m.hidden_size % m.num_heads != 0) {
    throw InputError("--kv-group", "d_model " + std::to_string(m.hidden_size) +
                                       " is not divisible by the group of " +
                                       std::to_string(group));
  }

  if (dims.num_kv_heads) {
    m.num_kv_heads = *dims.num_kv_heads;
    if (m.num_kv_heads <= 0) throw InputError("--kv-heads", "expected a positive integer");
    if (dims.kv_group && m.num_heads != m.num_kv_heads * group) {
      throw InputError("--kv-group", "conflicts with --heads / --kv-heads (" +
                                         std::to_string(m.num_heads) + " / " +
                                         std::to_string(m.num_kv_heads) + ")");
    }
  } else {
    if (m.num_heads % group != 0) {
      throw InputError("--kv-group", std::to_string(group) + " does not divide the " +
                                         std::to_string(m.num_heads) + " heads");
    }
    m.num_kv_heads = m.num_heads / group;
  }
  m.intermediate_size = dims.intermediate_size > 0 ? dims.intermediate_size : 4 * dims.hidden_size;
  m.mlp = MlpKind::Plain;
  m.vocab_size = dims.vocab_size;
  m.max_position_embeddings = dims.max_position_embeddings;
  m.native_dtype = DType::FP16;
  validate_model(m, where);
  return m;
}

}  // namespace servesim
