#pragma once

#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.h"
#include "sim/core/policy_parameters.h"

namespace servesim {

// Reads one policy section of a run config, {"name": NAME, KEY: VALUE, ...}, against the menu
// of its registry: the policy NAME (default `default_name`) with every parameter it declares,
// defaults filled in, and the parameters of the policies it names through Policy parameters
// (the contiguous allocator's reservation and placement), flat in the same object. Any other
// key is refused with an InputError naming the key, the policy, the keys it reads and, when
// another policy reads that key, which one.
PolicyChoice read_policy_section(JsonObjectReader& section, const PolicyMenu& menu,
                                 const std::string& default_name);

// {"name": NAME, KEY: VALUE, ...}: what read_policy_section reads back as the same choice.
nlohmann::json policy_section_to_json(const PolicyChoice& choice);

// The keys the policy a section names reads ("name" included, sub-policies resolved from the
// section's own values), or nothing when the section names no known policy.
std::optional<std::set<std::string>> policy_section_keys(const nlohmann::json& section,
                                                         const PolicyMenu& menu,
                                                         const std::string& default_name);

}  // namespace servesim
