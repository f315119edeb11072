#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/engine_profile.h"

namespace servesim {

// The engine profile a configuration document names (engine.name: a short name from
// engines/ or a path; the default engine when absent).
EngineProfile engine_of_document(const nlohmann::json& document,
                                 const std::filesystem::path& data_root);

// Removes from a document of built-in defaults the keys an engine decides (memory.mem_util,
// engine.enable_prefix_caching, the engine's cost sections, scheduler.name), so that after
// the file and the overrides are merged, a key still absent is one nobody set.
void remove_engine_decided_defaults(nlohmann::json& document);

// A warning when the engine profile was taken on another platform than the hardware's (a
// CUDA engine profile, with its CUDA graphs, FlashAttention and NCCL costs, on an AMD GPU):
// the run is then a first estimate. Nothing when they match.
std::optional<std::string> platform_warning(const nlohmann::json& document,
                                            const std::filesystem::path& data_root);

// Fills in what the engine decides and the document does not set: the scheduler (when no
// file or override chose one) and, when the scheduler is the engine's, the parameters it
// computes for the run's GPU and its preemption mode; the paged allocator's block size;
// memory.mem_util; engine.enable_prefix_caching; and the engine's host costs, CUDA graphs
// and kernel factors under any the document gives. The CUDA graph sizes are cut to the
// engine's limit for the run's max_num_seqs. Engine keys a policy does not read are refused
// naming the engine file.
void apply_engine_defaults(nlohmann::json& document, const EngineProfile& engine,
                           const std::filesystem::path& data_root);

}  // namespace servesim
