#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/config_assembly.h"
#include "sim/cli/options.h"

namespace servesim::cli {

// The options that describe one serving run (configuration file, --set, and the convenience
// flags that each set one configuration key), shared by `run` and `compare`.
void add_run_options(po::options_description& options);

// The configuration key a convenience flag sets ("rate" -> "workload.arrival.rate_per_s"),
// given without dashes (vLLM's names too); nothing when `flag` is not one.
std::optional<std::string> config_key_for_flag(std::string_view flag);
// The value that key takes for the flag's `value`: vLLM's value names translated
// (--kv-cache-dtype fp8_e4m3 -> "fp8"), any other value as it is.
nlohmann::json config_value_for_flag(std::string_view flag, const nlohmann::json& value);

// One of those options given by name rather than on a command line (the Python module's
// keyword arguments): `name` is the flag's name without dashes ("rate",
// "tensor-parallel-size", "prompt-tokens", "no-bulk-decode", "set"), `value` a string or a
// number as the flag takes, true for a switch (false: not given), a list of strings for the
// repeatable ones (set, goodput).
struct RunSetting {
  std::string name;
  nlohmann::json value;
};

// How messages name a setting: as its flag ("--prompt-tokens") or as a keyword argument
// ("prompt_tokens").
enum class SettingNames { Flags, Keywords };

// Whether `name` (without dashes) is one of the options add_run_options declares.
bool is_run_setting(std::string_view name);

// The configuration sources those settings name, in the order they apply: the file, the
// convenience flags (in the order add_run_options lists them), then --set. A value of the
// wrong type, or two settings that make the same one, is a UsageError naming them.
ConfigSources run_config_sources(const std::vector<RunSetting>& settings, SettingNames names);
// The same for the options given on a command line.
ConfigSources run_config_sources(const po::variables_map& vm);

}  // namespace servesim::cli
