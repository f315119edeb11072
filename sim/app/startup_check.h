#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/run_config.h"
#include "sim/engine/startup_checks.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/memory/kv_capacity.h"
#include "sim/memory/kv_pool_layout.h"
#include "sim/model/kv_spec.h"
#include "sim/model/model_spec.h"

namespace servesim {

// What an engine's start-up checks (sim/engine/startup_checks.h) look at in a deployment.
struct StartupFacts {
  std::string engine;      // engine.name, for messages
  std::string deployment;  // "llama-3.1-70b on h100-sxm at TP 2", for messages
  std::int64_t max_len_tokens = 0;
  bool max_len_given = false;  // false: the model's max_position_embeddings
  // KV bytes one GPU has for the cache, as planned from its memory; absent when the
  // configuration gives the capacity (memory.kv_capacity_tokens or kv_capacity_gib), which
  // no engine checks against a sequence.
  std::optional<double> kv_bytes_per_gpu;
  std::vector<KvGroup> groups_per_gpu;  // kv_groups_per_gpu
  KvPoolLayout pools;                   // kv_pool_layout of those groups
  bool paged = true;                    // the allocator cuts blocks of block_tokens
  std::int64_t block_tokens = 16;
  std::int64_t step_tokens = 8192;  // the scheduler's per-step token limit
  std::optional<std::int64_t> max_num_seqs;
  std::optional<std::int64_t> max_num_batched_tokens;
};

// The facts of a configuration; `planned` is the replica's memory plan (absent when the
// configuration gives the KV capacity).
StartupFacts startup_facts(const RunConfig& config, const ModelSpec& model,
                           const HardwareProfile& hardware,
                           const std::optional<KvCapacity>& planned);

// The most KV bytes one sequence of `tokens` tokens holds on one GPU, as vLLM's
// max_memory_usage_bytes sums them over the layers (kv_cache_interface.py): whole blocks of
// the full-attention and MLA layers; for windows and chunks at most W - 1 (chunk) + the step's
// tokens, plus a block for a window; one state of a recurrent layer.
double max_kv_bytes_per_sequence(const StartupFacts& facts, std::int64_t tokens);

// vLLM's estimate_max_model_len: the largest length in [1, max_len_tokens] whose sequence
// fits `kv_bytes` (binary search, as vLLM runs it); 0 when not even one token fits.
std::int64_t largest_max_len_that_fits(const StartupFacts& facts, double kv_bytes);

// Applies the engine's checks and returns the maximum length it serves with: max_len_tokens,
// or under MaxLenBeyondKv::Clip what fits. Throws InfeasibleError, one line naming the check
// and its figures, when the engine would not start (exit 4).
std::int64_t apply_startup_checks(const StartupChecks& checks, const StartupFacts& facts);

// Whether a deployment starts, for a study to list the shapes that do not.
struct StartupVerdict {
  bool starts = true;
  std::string reason;               // why not (the InfeasibleError's message)
  std::int64_t max_len_tokens = 0;  // what it serves with when it starts
};

// The verdict for a configuration document (assemble_config's): its model fits the GPUs'
// memory (plan_kv_capacity) and passes its engine's start-up checks. Bad input (unknown
// model, key, value) still throws, as run_simulation would.
StartupVerdict startup_verdict(const nlohmann::json& config_document,
                               const std::filesystem::path& data_root);

}  // namespace servesim
