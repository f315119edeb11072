#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace servesim {

// The vocabulary of one serving run: the convenience flags that each set one configuration
// key, vLLM's names for the same settings, and the settings that are not one key. The CLI
// declares its options from these tables and the Python module takes them as keyword
// arguments, so both speak the same names.

enum class FlagType { Text, Integer, Number, Raw };

// A convenience flag and the configuration key it sets. Raw values are passed through as
// text, so "--rate 4" becomes a number and "--rate inf" the string the workload accepts.
struct RunFlag {
  const char* flag;
  const char* key;
  FlagType type;
  const char* value_name;
  const char* help;
};

// vLLM's names (vllm serve, EngineArgs) for settings servesim's flags make: each sets `key`,
// the key of the servesim flags in `same_as` (comma-separated), so that either gives the same
// run, and giving both is refused; `value_of` translates vLLM's value names where they differ.
// --max-num-seqs and --block-size are already vLLM's names.
struct VllmFlag {
  const char* flag;
  const char* key;
  const char* same_as;
  FlagType type;
  const char* value_name;
  const char* help;
  std::string (*value_of)(const std::string& value);
};

// Settings that are not a flag of the tables above.
enum class SettingKind { Text, Integer, Number, Switch, List };
struct OtherSetting {
  const char* name;
  SettingKind kind;
};

std::span<const RunFlag> run_flags();
std::span<const VllmFlag> vllm_flags();
std::span<const OtherSetting> other_settings();

// The configuration key a convenience flag sets ("rate" -> "workload.arrival.rate_per_s"),
// given without dashes (vLLM's names too); nothing when `flag` is not one.
std::optional<std::string> config_key_for_flag(std::string_view flag);
// The value that key takes for the flag's `value`: vLLM's value names translated
// (--kv-cache-dtype fp8_e4m3 -> "fp8"), any other value as it is.
nlohmann::json config_value_for_flag(std::string_view flag, const nlohmann::json& value);

// Whether `name` (without dashes) is a run setting of these tables.
bool is_run_setting(std::string_view name);
// Whether that setting is a switch (given or not, no value).
bool is_switch(std::string_view name);

}  // namespace servesim
