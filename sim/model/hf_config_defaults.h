#pragma once

#include <nlohmann/json.hpp>

#include "sim/model/model_spec.h"

namespace servesim {

// The defaults of the transformers configuration class of a model family, for the keys
// servesim reads (docs/models.md, "Missing fields", names each class and its source): a
// config.json without such a key is read as transformers reads it, e.g. a Qwen3 file without
// head_dim gets Qwen3Config's 128, not hidden_size / heads. Keys whose default transformers
// derives from others (Llama's head_dim: hidden_size / num_attention_heads; num_key_value_heads
// of the classes that default it to None: num_attention_heads) are not listed: servesim derives
// them the same way. A key whose class default is None where servesim needs a value (DeepSeek-
// V2's num_experts_per_tok with routed experts) is not listed either: the file is refused.
// Gemma 3 and Llama 4 give their text model's class (Gemma3TextConfig, Llama4TextConfig).
nlohmann::json transformers_config_defaults(ModelFamily family);

// `config` with every key of `defaults` that it lacks filled in (a key present, even as null,
// is kept: transformers passes it to the class as given).
nlohmann::json with_config_defaults(const nlohmann::json& config, const nlohmann::json& defaults);

}  // namespace servesim
