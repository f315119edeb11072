#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/model_spec.h"

namespace servesim {

// Reads a Hugging Face config.json of the llama, mistral, mixtral, qwen2 or opt families.
// Keys the simulator does not use (tokenizer ids, rope scaling, ...) are ignored, because
// real config files carry dozens of them; keys it uses are type- and range-checked, and
// other architectures are refused naming the model_type / architectures field.
ModelSpec load_model_file(const std::filesystem::path& path);
ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& source_name,
                               const std::string& default_name);

}  // namespace servesim
