#pragma once

#include "sim/core/json_reader.h"
#include "sim/model/model_spec.h"

namespace servesim {

// Reads the dimensions of a Hugging Face config.json (or of its text_config) by the keys of
// `m.family`, which the caller has detected: layers, heads, MLP, experts, attention kinds.
void read_model_family(JsonObjectReader& r, ModelSpec& m);

}  // namespace servesim
