#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model/model_spec.h"

namespace servesim {

// A Hugging Face checkpoint of a shipped model's architecture that is not the id the model's
// file names in "_name_or_path": its base or instruct twin, an old name, or a quantized
// checkpoint (with the quantization_config its config.json carries, in the keys servesim's
// loader reads; null for the model's own weights).
struct CheckpointId {
  std::string_view hf_id;
  std::string_view model;                // the shipped model (file stem in models/)
  std::string_view quantization_config;  // JSON text, or empty
};

// Every checkpoint id of the table, in table order.
std::vector<CheckpointId> checkpoint_ids();
// The entry of `hf_id` (case-insensitive), if any.
std::optional<CheckpointId> find_checkpoint(std::string_view hf_id);

// The model `name_or_path` names, from models/ in `data_root`: a shipped name, a file (a
// config.json without "_name_or_path" is named after its folder), a Hugging Face id of a
// shipped file's "_name_or_path", or one of the checkpoint table (the shipped file with the
// checkpoint's id and quantization). An unknown Hugging Face id is an InputError naming
// `flag` and the nearest known ids.
ModelSpec load_catalog_model(const std::filesystem::path& data_root, std::string_view name_or_path,
                             const std::string& flag);

}  // namespace servesim
