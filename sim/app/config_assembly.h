#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

struct ConfigOverride {
  std::string origin;      // the flag it came from, for errors ("--rate", "--set")
  std::string assignment;  // "workload.arrival.rate_per_s=4"
};

// An override of this key path sets the per-iteration token limit of whichever scheduler the
// run ends up with, as vLLM's --max-num-batched-tokens does: scheduler.token_budget for sarathi
// (the chunked-prefill budget), scheduler.max_num_batched_tokens for any other scheduler (so
// one that reads neither refuses it by name). It applies after every other override, once the
// scheduler is known, so each point of a sweep over schedulers gets its own key.
inline constexpr char kSchedulerTokenLimitKey[] = "scheduler.@token_limit";

struct ConfigSources {
  std::optional<std::filesystem::path> config_file;
  // A configuration document given in place of the file (the Python module's dict): the same
  // keys, merged the same way. At most one of the two.
  std::optional<nlohmann::json> config_document;
  std::vector<ConfigOverride> overrides;  // applied in order, after the file
  // vLLM's --enable-chunked-prefill (true) or --no-enable-chunked-prefill (false): the
  // scheduler the configuration ends with must chunk prompts (sarathi), or must not.
  std::optional<bool> chunked_prefill;
};

// Builds the complete run configuration document: the built-in defaults (the policy sections
// hold only the default policies' names: run_config_from_json fills in the parameters the
// chosen policies declare), then the config file merged over them, then the overrides. An
// override that switches a policy drops the keys of the file's policy that the new one does
// not read; keys set by overrides are kept, so one the policy does not read is refused. A
// workload given by name (a preset in workloads/ or a path), or as {"preset": NAME, ...keys
// merged over it}, is expanded before the workload.* overrides apply, so
// `--workload azure-conv-2023 --rate 2` changes the preset's rate. When neither the config
// file nor a `workload=` override names a workload, it is the built-in default: the sharegpt
// preset, Poisson at 8 req/s, 2,000 requests (field overrides such as --rate still apply).
// Last, the engine (engine.name, default "vllm") fills in what it decides and nobody set:
// its scheduler and that scheduler's defaults, the block size, memory.mem_util, prefix
// caching, and its host costs, CUDA graphs and kernel factors (see apply_engine_defaults).
nlohmann::json assemble_config(const ConfigSources& sources,
                               const std::filesystem::path& data_root);

}  // namespace servesim
