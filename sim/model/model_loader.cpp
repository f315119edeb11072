#include "sim/model/model_loader.h"

#include <array>
#include <utility>

#include "sim/config/json_reader.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr std::array<std::pair<std::string_view, ModelFamily>, 5> kFamilies{{
    {"llama", ModelFamily::Llama},
    {"mistral", ModelFamily::Mistral},
    {"mixtral", ModelFamily::Mixtral},
    {"qwen2", ModelFamily::Qwen2},
    {"opt", ModelFamily::Opt},
}};

// HF architecture class names, for configs that lack model_type.
constexpr std::array<std::pair<std::string_view, ModelFamily>, 5> kArchitectures{{
    {"LlamaForCausalLM", ModelFamily::Llama},
    {"MistralForCausalLM", ModelFamily::Mistral},
    {"MixtralForCausalLM", ModelFamily::Mixtral},
    {"Qwen2ForCausalLM", ModelFamily::Qwen2},
    {"OPTForCausalLM", ModelFamily::Opt},
}};

constexpr std::string_view kSupported = "llama, mistral, mixtral, qwen2, opt";

ModelFamily detect_family(JsonObjectReader& r) {
  if (const auto model_type = r.optional_string("model_type")) {
    for (const auto& [name, family] : kFamilies) {
      if (name == *model_type) return family;
    }
    r.fail("model_type", "architecture \"" + *model_type +
                             "\" is not supported (supported: " + std::string(kSupported) + ")");
  }
  const nlohmann::json* architectures = r.optional_raw("architectures");
  if (architectures == nullptr || !architectures->is_array() || architectures->empty() ||
      !(*architectures)[0].is_string()) {
    r.fail("model_type", "required but missing (and no \"architectures\" list to infer it from)");
  }
  const auto architecture = (*architectures)[0].get<std::string>();
  for (const auto& [name, family] : kArchitectures) {
    if (name == architecture) return family;
  }
  r.fail("architectures", "architecture \"" + architecture +
                              "\" is not supported (supported: " + std::string(kSupported) + ")");
}

// Newer Transformers write "dtype" where older ones wrote "torch_dtype"; "dtype" wins when a
// file has both.
DType read_native_dtype(JsonObjectReader& r) {
  const char* key = r.has("dtype") ? "dtype" : "torch_dtype";
  const auto text = r.optional_string(key);
  if (!text) return DType::FP16;
  try {
    return parse_dtype(*text, "");
  } catch (const InputError&) {
    r.fail(key, "unknown dtype \"" + *text + "\" (expected float32, bfloat16 or float16)");
  }
}

// quantization_config.quant_method, or "unknown" for a config without one.
std::optional<std::string> read_quantization(JsonObjectReader& r) {
  const nlohmann::json* config = r.optional_raw("quantization_config");
  if (config == nullptr) return std::nullopt;
  if (config->is_object() && config->contains("quant_method") &&
      (*config)["quant_method"].is_string()) {
    return "quant_method \"" + (*config)["quant_method"].get<std::string>() + "\"";
  }
  return "quant_method unknown";
}

void read_llama_like(JsonObjectReader& r, ModelSpec& m) {
  m.num_layers = r.positive_integer("num_hidden_layers");
  m.hidden_size = r.positive_integer("hidden_size");
  m.num_heads = r.positive_integer("num_attention_heads");
  m.num_kv_heads = r.optional_positive_integer("num_key_value_heads").value_or(m.num_heads);
  m.intermediate_size = r.positive_integer("intermediate_size");
  m.vocab_size = r.positive_integer("vocab_size");
  m.max_position_embeddings = r.positive_integer("max_position_embeddings");
  m.tied_embeddings = r.optional_boolean("tie_word_embeddings").value_or(false);
  m.mlp = MlpKind::Gated;
  m.norm = NormKind::RmsNorm;
  m.qkv_bias = r.optional_boolean("attention_bias").value_or(m.family == ModelFamily::Qwen2);
  m.output_and_mlp_bias = r.optional_boolean("mlp_bias").value_or(false);
  if (const auto head_dim = r.optional_positive_integer("head_dim")) {
    m.head_dim = *head_dim;
  } else {
    if (m.hidden_size % m.num_heads != 0) {
      r.fail("num_attention_heads", std::to_string(m.num_heads) +
                                        " heads do not divide hidden_size " +
                                        std::to_string(m.hidden_size));
    }
    m.head_dim = m.hidden_size / m.num_heads;
  }
  // Qwen2 configs carry a sliding_window that applies only when use_sliding_window is true.
  const bool window_enabled = r.optional_boolean("use_sliding_window").value_or(true);
  const auto window = r.optional_positive_integer("sliding_window");
  if (window && window_enabled) m.sliding_window_tokens = window;
  if (m.family == ModelFamily::Mixtral) {
    m.num_experts = r.positive_integer("num_local_experts");
    m.experts_per_token = r.positive_integer("num_experts_per_tok");
  }
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

ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& source_name,
                               const std::string& default_name) {
  JsonObjectReader r(config, source_name);
  ModelSpec m;
  m.source = source_name;
  m.family = detect_family(r);
  m.name = r.optional_string("_name_or_path").value_or(default_name);
  m.native_dtype = read_native_dtype(r);
  m.quantization = read_quantization(r);
  if (m.family == ModelFamily::Opt) {
    read_opt(r, m);
  } else {
    read_llama_like(r, m);
  }
  if (m.num_heads % m.num_kv_heads != 0) {
    r.fail("num_key_value_heads", std::to_string(m.num_kv_heads) + " KV heads do not divide " +
                                      std::to_string(m.num_heads) + " attention heads");
  }
  validate_model(m, source_name);
  return m;
}

ModelSpec load_model_file(const std::filesystem::path& path) {
  return model_from_hf_config(read_json_file(path), path.string(), path.stem().string());
}

}  // namespace servesim
