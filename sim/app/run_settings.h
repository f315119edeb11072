#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/config_assembly.h"

namespace servesim {

// One run setting given by name rather than on a command line (the Python module's
// keyword arguments): `name` is the flag's name without dashes ("rate",
// "tensor-parallel-size", "prompt-tokens", "no-bulk-decode", "set"), `value` a string or a
// number as the flag takes, true for a switch (false: not given), a list of strings for the
// repeatable ones (set, goodput). The names are those of sim/app/run_flags.h.
struct RunSetting {
  std::string name;
  nlohmann::json value;
};

// How messages name a setting: as its flag ("--prompt-tokens") or as a keyword argument
// ("prompt_tokens").
enum class SettingNames { Flags, Keywords };

// The configuration sources those settings name, in the order they apply: the file, the
// convenience flags (in the order of run_flags()), then --set. A value of the wrong type, or
// two settings that make the same one, is a UsageError naming them.
ConfigSources run_config_sources(const std::vector<RunSetting>& settings, SettingNames names);

// The overrides one value of a study's axis makes: `policy` as a policy spec
// (SCHEDULER:ALLOCATOR...), a flag's name as the key it sets, any other name as a key.
std::vector<ConfigOverride> axis_overrides(const std::string& name, const nlohmann::json& value);

}  // namespace servesim
