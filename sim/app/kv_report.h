#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "sim/hardware/hardware_profile.h"
#include "sim/memory/kv_capacity.h"
#include "sim/model/model_spec.h"

namespace servesim {

// What the KV-cache calculator is asked beyond the model.
struct KvReportOptions {
  std::optional<std::int64_t> tokens;  // size a cache for this many tokens (>= 0)
  // The KV dtype always applies; the rest only with a hardware profile.
  KvCapacityOptions capacity;
  // Sequence length for max_sequences_at_max_len (>= 1); default the model's
  // max_position_embeddings.
  std::optional<std::int64_t> max_len;
};

// The document `servesim kv --json` prints (README, "servesim kv"): the model's parameters
// and KV bytes per token, the bytes of `tokens` tokens, and with `hardware` one replica's
// memory plan (weights, activation reserve and KV per GPU, KV capacity in bytes and tokens,
// sequences of max_len tokens that fit). Throws InfeasibleError, with the figures, when the
// weights and activations leave no KV room.
nlohmann::json kv_report(const ModelSpec& model, const HardwareProfile* hardware,
                         const KvReportOptions& options);

}  // namespace servesim

namespace servesim {

// What `servesim kv` asks of a run's configuration beyond the document.
struct KvRunReportOptions {
  std::optional<std::int64_t> tokens;  // size a cache for this many tokens (>= 0)
  bool with_hardware = false;          // add the replica's memory plan on the document's GPU
  // A model given by raw dimensions in place of the document's model (nullopt: the document's).
  std::optional<ModelSpec> model;
};

// kv_report for a run's configuration document (assemble_config's, with its engine's
// defaults): the planner's options are those run_simulation uses (replica_memory.h), so `kv`
// and `run` print the same capacity for the same flags. Adds "engine" and, with the hardware,
// "starts" (whether the engine's start-up checks pass, sim/app/startup_check.h),
// "max_len_that_fits" (vLLM's estimate_max_model_len, at most max_len) and, when it does not
// start, "does_not_start" (why).
nlohmann::json kv_report_for_run(const nlohmann::json& config_document,
                                 const std::filesystem::path& data_root,
                                 const KvRunReportOptions& options);

}  // namespace servesim
