#include "sim/config/model_catalog.h"

#include <algorithm>
#include <cctype>

#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/core/suggest.h"
#include "sim/model/model_loader.h"

namespace servesim {
namespace {

// quantization_config of the quantized checkpoints, in the keys servesim reads: FP8 per tensor
// or channel (RedHatAI's checkpoints say "compressed-tensors", FP8 weights and activations per
// tensor, which servesim prices as its fp8; Meta's fbgemm FP8 as theirs), FP8 in 128 x 128
// blocks (Qwen's), and NVIDIA Model Optimizer's FP8 and NVFP4 (as vLLM reads them).
constexpr std::string_view kFp8 = R"({"quant_method": "fp8"})";
constexpr std::string_view kFbgemmFp8 = R"({"quant_method": "fbgemm_fp8"})";
constexpr std::string_view kFp8Blocks =
    R"({"quant_method": "fp8", "weight_block_size": [128, 128]})";
// AutoAWQ's 4-bit integer groups of 128 with zero points (Qwen's AWQ checkpoints).
constexpr std::string_view kAwq =
    R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true})";
constexpr std::string_view kModeloptFp8 = R"({"quant_method": "modelopt", "quant_algo": "FP8"})";
constexpr std::string_view kModeloptFp4 = R"({"quant_method": "modelopt", "quant_algo": "NVFP4"})";

// Checkpoints whose config.json has the architecture of the shipped model's (layers, widths,
// heads, max_position_embeddings): instruct or chat twins of a base model and the reverse,
// Meta's old Meta-Llama-3.1 names, and quantized checkpoints of the same weights. The base
// models of Llama-4-Scout (256K positions) and Mistral-Nemo (128K) are not listed: their
// context differs from the shipped instruct files'. Each id was checked against public uses of
// it (engine docs, recipes, tests) on 2026-12-03.
constexpr CheckpointId kCheckpoints[] = {
    {"meta-llama/Llama-2-7b-chat-hf", "llama-2-7b", ""},
    {"meta-llama/Llama-2-13b-chat-hf", "llama-2-13b", ""},
    {"meta-llama/Llama-2-70b-chat-hf", "llama-2-70b", ""},
    {"meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b", ""},
    {"meta-llama/Meta-Llama-3-70B-Instruct", "llama-3-70b", ""},
    {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", ""},
    {"meta-llama/Meta-Llama-3.1-8B", "llama-3.1-8b", ""},
    {"meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b", ""},
    {"RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b", kFp8},
    {"neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b", kFp8},
    {"nvidia/Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b", kModeloptFp8},
    {"nvidia/Llama-3.1-8B-Instruct-FP4", "llama-3.1-8b", kModeloptFp4},
    {"meta-llama/Llama-3.1-70B", "llama-3.1-70b", ""},
    {"meta-llama/Meta-Llama-3.1-70B", "llama-3.1-70b", ""},
    {"meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b", ""},
    {"RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8", "llama-3.1-70b", kFp8},
    {"meta-llama/Llama-3.1-405B-Instruct", "llama-3.1-405b", ""},
    {"meta-llama/Meta-Llama-3.1-405B", "llama-3.1-405b", ""},
    {"meta-llama/Meta-Llama-3.1-405B-Instruct", "llama-3.1-405b", ""},
    {"meta-llama/Llama-3.1-405B-FP8", "llama-3.1-405b", kFbgemmFp8},
    {"meta-llama/Llama-3.1-405B-Instruct-FP8", "llama-3.1-405b", kFbgemmFp8},
    {"nvidia/Llama-3.3-70B-Instruct-FP8", "llama-3.3-70b", kModeloptFp8},
    {"nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.3-70b", kModeloptFp4},
    {"mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b", ""},
    {"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b", ""},
    {"codellama/CodeLlama-34b-hf", "codellama-34b", ""},
    {"google/gemma-3-1b-pt", "gemma-3-1b", ""},
    {"google/gemma-3-27b-pt", "gemma-3-27b", ""},
    {"Qwen/Qwen3-8B-FP8", "qwen3-8b", kFp8Blocks},
    {"Qwen/Qwen3-14B-FP8", "qwen3-14b", kFp8Blocks},
    {"Qwen/Qwen3-14B-AWQ", "qwen3-14b", kAwq},
    {"Qwen/Qwen3-32B-FP8", "qwen3-32b", kFp8Blocks},
    {"Qwen/Qwen3-32B-AWQ", "qwen3-32b", kAwq},
    {"Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "qwen3-235b-2507", kFp8Blocks},
    {"Qwen/Qwen3-30B-A3B-FP8", "qwen3-30b-a3b", kFp8Blocks},
    {"Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b", kFp8Blocks},
    // DeepSeek-R1 and V3-0324 are trained further from V3's architecture, in V3's FP8 blocks
    // (the shipped file's own quantization_config).
    {"deepseek-ai/DeepSeek-V3-Base", "deepseek-v3", ""},
    {"deepseek-ai/DeepSeek-V3-0324", "deepseek-v3", ""},
    {"deepseek-ai/DeepSeek-R1", "deepseek-v3", ""},
    {"nvidia/DeepSeek-R1-FP4", "deepseek-v3", kModeloptFp4},
};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "org/name" with no such file: what a Hugging Face id looks like.
bool looks_like_hf_id(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string_view::npos || text.ends_with(".json")) {
    return false;
  }
  std::error_code ec;
  return !std::filesystem::exists(std::filesystem::path(text), ec);
}

}  // namespace

std::vector<CheckpointId> checkpoint_ids() {
  return {std::begin(kCheckpoints), std::end(kCheckpoints)};
}

std::optional<CheckpointId> find_checkpoint(std::string_view hf_id) {
  const std::string wanted = lower(hf_id);
  for (const CheckpointId& c : kCheckpoints) {
    if (lower(c.hf_id) == wanted) return c;
  }
  return std::nullopt;
}

ModelSpec load_catalog_model(const std::filesystem::path& data_root, std::string_view name_or_path,
                             const std::string& flag) {
  const Catalog catalog(data_root / "models", "model", flag);
  if (const auto checkpoint = find_checkpoint(name_or_path)) {
    const std::filesystem::path file = catalog.resolve(checkpoint->model);
    nlohmann::json config = read_json_file(file);
    config["_name_or_path"] = std::string(checkpoint->hf_id);
    if (!checkpoint->quantization_config.empty()) {
      config["quantization_config"] =
          parse_json_text(checkpoint->quantization_config, std::string(checkpoint->hf_id));
    }
    return model_from_hf_config(config, file.string() + " as " + std::string(checkpoint->hf_id),
                                std::string(checkpoint->model));
  }
  if (looks_like_hf_id(name_or_path) && !catalog.find_by_hf_id(name_or_path)) {
    std::vector<std::string> known;
    for (const std::string& name : catalog.names()) {
      const nlohmann::json entry = read_json_file(catalog.directory() / (name + ".json"));
      if (entry.is_object() && entry.contains("_name_or_path") &&
          entry["_name_or_path"].is_string()) {
        known.push_back(entry["_name_or_path"].get<std::string>());
      }
    }
    for (const CheckpointId& c : kCheckpoints)
      known.emplace_back(c.hf_id);
    std::vector<std::string> nearest = close_names(name_or_path, known);
    if (nearest.empty()) {
      // Nothing within a few edits: the ids of the same organisation.
      const std::string org = lower(name_or_path.substr(0, name_or_path.find('/') + 1));
      for (const std::string& id : known) {
        if (lower(id).starts_with(org) && nearest.size() < 5) nearest.push_back(id);
      }
    }
    std::string names;
    for (const std::string& id : nearest)
      names += (names.empty() ? "" : ", ") + id;
    throw InputError(flag, "\"" + std::string(name_or_path) +
                               "\": no shipped model has this Hugging Face id, and no file has "
                               "this path" +
                               (names.empty() ? std::string("; give a config.json path")
                                              : "; nearest: " + names) +
                               " (servesim list shows the shipped models)");
  }
  const std::filesystem::path file = catalog.resolve(name_or_path);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) return load_model_file(file);
  // A config.json without "_name_or_path" is named after its folder, not "config".
  const std::string stem = file.stem().string();
  const std::string fallback =
      stem == "config" && file.has_parent_path()
          ? std::filesystem::absolute(file).parent_path().filename().string()
          : stem;
  return model_from_hf_config(read_json_file(file), file.string(), fallback);
}

}  // namespace servesim
