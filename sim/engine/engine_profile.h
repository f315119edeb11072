#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/engine_costs.h"
#include "sim/engine/startup_checks.h"

namespace servesim {

// Scheduler parameters an engine computes for a deployment, chosen by the GPU: the first
// rule whose conditions hold gives them (vLLM sizes its batches by device memory).
struct SchedulerDefaultsRule {
  std::optional<double> min_memory_gib;                  // the GPU has at least this much memory
  std::vector<std::string> except_gpus;                  // hardware profile names the rule skips
  nlohmann::json parameters = nlohmann::json::object();  // scheduler keys and values
};

// How an engine schedules, with the defaults it computes.
struct EngineScheduling {
  std::string scheduler;  // scheduler policy (registry name)
  std::vector<SchedulerDefaultsRule> scheduler_defaults;
  bool chunked_prefill = false;
  bool enable_prefix_caching = false;
  std::int64_t block_size = 16;  // tokens per KV block (paged allocators)
  double gpu_memory_utilization = 0.9;
  std::string preemption_mode = "recompute";  // or "swap"
  // How the engine counts the memory that is not KV at start-up ("memory_accounting":
  // "reserve" or "profile_run", kv_capacity.h's ActivationAccounting), with profile_run's
  // figures.
  std::string memory_accounting = "reserve";
  double non_torch_bytes = 0;
  double sampler_bytes_per_logit = 0;
};

// One serving engine, as loaded from engines/<name>.json: its scheduling, its host costs and
// its kernel factors. Hardware profiles describe the GPU alone; what an engine adds to a
// step lives here, with where each number comes from.
struct EngineProfile {
  std::string name;
  std::string description;
  std::string source;  // the file it was read from
  EngineScheduling scheduling;
  EngineCosts costs;
  StartupChecks startup;  // what it refuses or cuts before serving ("startup"; none if absent)
  // When a disaggregated deployment's decode side sets a prompt's KV aside ("kv_handoff"):
  // "pull_after_prefill" (the default) or "reserve_before_prefill" (docs/disaggregation.md).
  std::string kv_handoff = "pull_after_prefill";
  // The platform the profile's costs were taken on ("platform"): "cuda" (CUDA graphs,
  // FlashAttention, NCCL) or "rocm".
  std::string platform = "cuda";
  // Free-form metadata written by `servesim calibrate --measured` (null when absent).
  nlohmann::json calibration;
  std::map<std::string, std::string> sources;  // by dotted key path

  // The scheduler parameters of the first rule that holds for a GPU (empty when none does).
  nlohmann::json scheduler_parameters_for(const std::string& hardware_name,
                                          double memory_capacity_bytes) const;
};

EngineProfile engine_from_json(const nlohmann::json& document, const std::string& source_name);
EngineProfile load_engine_file(const std::filesystem::path& path);
nlohmann::json engine_to_json(const EngineProfile& engine);

// The cost-model part of an engine as the "engine" section of a run configuration holds it
// (keys "host", "kernels", "cuda_graphs"), and back: resolved_config.json shows every value.
nlohmann::json engine_costs_to_json(const EngineCosts& costs);
// Reads the keys present in `document` over `costs`; unknown keys and negative costs are
// refused naming `source_name` and the key path under `key_prefix`.
void read_engine_costs(const nlohmann::json& document, const std::string& source_name,
                       const std::string& key_prefix, EngineCosts& costs);

}  // namespace servesim
