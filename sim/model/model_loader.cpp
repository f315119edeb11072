#include "sim/model/model_loader.h"

#include <array>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/model/hf_config_defaults.h"
#include "sim/model/hf_family_readers.h"

namespace servesim {
namespace {

constexpr std::array<std::pair<std::string_view, ModelFamily>, 16> kFamilies{{
    {"llama", ModelFamily::Llama},
    {"mistral", ModelFamily::Mistral},
    {"mixtral", ModelFamily::Mixtral},
    {"qwen2", ModelFamily::Qwen2},
    {"opt", ModelFamily::Opt},
    {"qwen3", ModelFamily::Qwen3},
    {"qwen3_moe", ModelFamily::Qwen3Moe},
    {"qwen3_next", ModelFamily::Qwen3Next},
    {"deepseek_v2", ModelFamily::DeepseekV2},
    {"deepseek_v3", ModelFamily::DeepseekV3},
    {"gpt_oss", ModelFamily::GptOss},
    {"gemma3", ModelFamily::Gemma3},
    {"gemma3_text", ModelFamily::Gemma3},
    {"llama4", ModelFamily::Llama4},
    {"llama4_text", ModelFamily::Llama4},
    {"mistral3", ModelFamily::Mistral},
}};

// HF architecture class names, for configs that lack model_type.
constexpr std::array<std::pair<std::string_view, ModelFamily>, 15> kArchitectures{{
    {"LlamaForCausalLM", ModelFamily::Llama},
    {"MistralForCausalLM", ModelFamily::Mistral},
    {"MixtralForCausalLM", ModelFamily::Mixtral},
    {"Qwen2ForCausalLM", ModelFamily::Qwen2},
    {"OPTForCausalLM", ModelFamily::Opt},
    {"Qwen3ForCausalLM", ModelFamily::Qwen3},
    {"Qwen3MoeForCausalLM", ModelFamily::Qwen3Moe},
    {"Qwen3NextForCausalLM", ModelFamily::Qwen3Next},
    {"DeepseekV2ForCausalLM", ModelFamily::DeepseekV2},
    {"DeepseekV3ForCausalLM", ModelFamily::DeepseekV3},
    {"GptOssForCausalLM", ModelFamily::GptOss},
    {"Gemma3ForCausalLM", ModelFamily::Gemma3},
    {"Gemma3ForConditionalGeneration", ModelFamily::Gemma3},
    {"Llama4ForCausalLM", ModelFamily::Llama4},
    {"Llama4ForConditionalGeneration", ModelFamily::Llama4},
}};

constexpr std::string_view kSupported =
    "llama, mistral, mixtral, qwen2, opt, qwen3, qwen3_moe, qwen3_next, deepseek_v2, "
    "deepseek_v3, gpt_oss, gemma3, gemma3_text, llama4, llama4_text";

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
std::optional<DType> read_native_dtype(JsonObjectReader& r) {
  const char* key = r.has("dtype") ? "dtype" : "torch_dtype";
  const auto text = r.optional_string(key);
  if (!text) return std::nullopt;
  try {
    return parse_dtype(*text, "");
  } catch (const InputError&) {
    r.fail(key, "unknown dtype \"" + *text + "\" (expected float32, bfloat16 or float16)");
  }
}

std::optional<WeightQuantization> read_quantization(JsonObjectReader& r) {
  const nlohmann::json* config = r.optional_raw("quantization_config");
  if (config == nullptr || config->is_null()) return std::nullopt;
  return parse_quantization_config(*config, r.source_name());
}

}  // namespace

ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& source_name,
                               const std::string& default_name) {
  ModelSpec m;
  m.source = source_name;
  m.family = [&] {
    JsonObjectReader detect(config, source_name);
    return detect_family(detect);
  }();
  // A key the file lacks is read as transformers' configuration class defaults it (of the
  // text model, for the multimodal files that nest it in text_config).
  // Mistral3Config (multimodal) nests its MistralConfig in text_config, which servesim does not
  // read: its top-level keys get no defaults, so a file without them is refused.
  // A text_config that is no object is a broken file, whichever family reads it.
  if (const auto text = config.find("text_config");
      text != config.end() && !text->is_null() && !text->is_object()) {
    throw InputError(source_name,
                     "field \"text_config\": expected a JSON object (the language "
                     "model's configuration), got " +
                         describe_json(*text));
  }
  const bool mistral3 = config.value("model_type", "") == "mistral3";
  const nlohmann::json defaults =
      mistral3 ? nlohmann::json::object() : transformers_config_defaults(m.family);
  const bool nested = (m.family == ModelFamily::Gemma3 || m.family == ModelFamily::Llama4) &&
                      config.contains("text_config") && config["text_config"].is_object();
  nlohmann::json filled = nested ? config : with_config_defaults(config, defaults);
  if (nested) filled["text_config"] = with_config_defaults(config["text_config"], defaults);
  JsonObjectReader r(filled, source_name);
  r.ignore("model_type");
  r.ignore("architectures");
  m.name = r.optional_string("_name_or_path").value_or(default_name);
  const std::optional<DType> top_dtype = read_native_dtype(r);
  m.quantization = read_quantization(r);
  // Multimodal checkpoints (Gemma 3 4B-27B, Llama 4) nest the language model's dimensions
  // in text_config; servesim models the language model only.
  const nlohmann::json* text = r.optional_raw("text_config");
  if (text != nullptr && text->is_object() &&
      (m.family == ModelFamily::Gemma3 || m.family == ModelFamily::Llama4)) {
    JsonObjectReader t = r.object("text_config");
    const std::optional<DType> text_dtype = read_native_dtype(t);
    m.native_dtype = top_dtype.value_or(text_dtype.value_or(DType::FP16));
    read_model_family(t, m);
  } else {
    m.native_dtype = top_dtype.value_or(DType::FP16);
    read_model_family(r, m);
  }
  if (m.num_heads % m.num_kv_heads != 0) {
    r.fail("num_key_value_heads", std::to_string(m.num_kv_heads) + " KV heads do not divide " +
                                      std::to_string(m.num_heads) + " attention heads");
  }
  validate_model(m, source_name);
  return m;
}

ModelSpec load_model_file(const std::filesystem::path& path) {
  // A snapshot folder (what huggingface-cli download leaves) holds its config.json and is
  // named by the folder.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const std::filesystem::path config = path / "config.json";
    if (!std::filesystem::is_regular_file(config, ec)) {
      throw InputError(path.string(), "a model folder must hold config.json (not found)");
    }
    const std::string folder =
        path.filename().empty() ? path.parent_path().filename().string() : path.filename().string();
    return model_from_hf_config(read_json_file(config), config.string(), folder);
  }
  return model_from_hf_config(read_json_file(path), path.string(), path.stem().string());
}

}  // namespace servesim
