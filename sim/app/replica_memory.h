#pragma once

#include <cstdint>
#include <optional>

#include "sim/config/run_config.h"
#include "sim/core/policy_parameters.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/memory/kv_capacity.h"
#include "sim/model/model_spec.h"

namespace servesim {

// How a run sizes one replica's memory from its configuration: the one reading of the
// configuration that `run` (run_simulation), `kv` (kv_report_for_run) and the start-up checks
// (startup_verdict) share, so that all three plan the same capacity for the same deployment.

// The KV dtype of the configuration ("auto": the model's).
DType kv_dtype_of(const RunConfig& config, const ModelSpec& model);
// The weight dtype of the configuration ("auto": the model's).
DType weight_dtype_of(const RunConfig& config, const ModelSpec& model);

// The KV capacity planner reserves activation memory for this many sequences: the
// scheduler's max_num_seqs, or for a scheduler without that cap (static) vLLM's default of
// 256, which every scheduler used before each policy read only its own parameters.
std::int64_t planned_sequences(const PolicyParameters& scheduler);

// Tokens per KV block: the paged allocator's block_size; 1 for an allocator without blocks
// (contiguous regions are reserved token by token).
std::int64_t block_tokens_of(const RunConfig& config);

// The planner's options for the configuration: parallelism, dtypes, memory utilization,
// activation reserve (memory.max_batched_tokens_reserve), max_num_seqs and block size.
KvCapacityOptions kv_capacity_options(const RunConfig& config, const ModelSpec& model);

// The replica's memory plan (plan_kv_capacity with kv_capacity_options), or nothing when the
// configuration gives the KV capacity (memory.kv_capacity_tokens or kv_capacity_gib).
std::optional<KvCapacity> planned_capacity(const RunConfig& config, const ModelSpec& model,
                                           const HardwareProfile& hardware);

// The maximum sequence length of the configuration: max_len, or the model's
// max_position_embeddings. Throws InputError beyond those positions, as vLLM refuses them.
std::int64_t max_len_of(const RunConfig& config, const ModelSpec& model);

// The per-step token limit of the configuration's scheduler (max_num_batched_tokens, or the
// chunked-prefill token_budget); without one (or 0, vLLM V0's "max(max_len, 2048)"), the
// activation reserve's tokens.
std::int64_t step_tokens_of(const RunConfig& config, std::int64_t max_len_tokens);

}  // namespace servesim
