#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace servesim {

// Applies one `a.b.c=value` override to a JSON document, creating objects on the way. The
// value is read as JSON when it parses (numbers, true, null, {"k": 1}) and as a string
// otherwise, so `--set workload.arrival.rate_per_s=4` and `--set router=random` both work.
// `origin` names the flag in errors.
void apply_override(nlohmann::json& document, std::string_view assignment,
                    const std::string& origin);

// Sets the value at a dotted path.
void set_path(nlohmann::json& document, std::string_view path, nlohmann::json value,
              const std::string& origin);

// Merges `patch` into `base` key by key (objects recursively, anything else replaced).
void deep_merge(nlohmann::json& base, const nlohmann::json& patch);

}  // namespace servesim
