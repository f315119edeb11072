#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// What an engine does at start-up when one sequence of the maximum length does not fit the
// KV cache it sized from the GPU's memory:
//   Refuse  vLLM: exits, naming the largest max_model_len that fits
//           (kv_cache_utils.py check_enough_kv_cache_memory, estimate_max_model_len)
//   Clip    SGLang and TensorRT-LLM: start, with the maximum length cut to what fits
//           (SGLang's scheduler: max_req_len = min(context_len - 1, pool tokens - 1);
//           TensorRT-LLM's adjustMaxAttentionWindow: maxSequenceLen cut to the blocks)
//   Allow   no check (a profile that says nothing)
enum class MaxLenBeyondKv { Allow, Refuse, Clip };

// The checks an engine makes before it serves (engines/<name>.json "startup"; the "engine"
// section of a run configuration carries them as "startup"). Each is the engine's own rule.
struct StartupChecks {
  MaxLenBeyondKv max_len_beyond_kv = MaxLenBeyondKv::Allow;
  // Clip: tokens the engine keeps below what fits (SGLang: 1).
  std::int64_t clip_margin_tokens = 0;
  // vLLM's SchedulerConfig.verify_max_model_len: the per-step token limit must cover
  // max_num_seqs (one token each). (Its other rule, that without chunked prefill the limit
  // holds a max_len prompt, is the vllm scheduler's own and applies under every engine.)
  bool batched_tokens_cover_max_num_seqs = false;
  // Tokens per KV block the engine accepts: one of `block_sizes` (empty: any), and with
  // block_size_power_of_two a power of two of at least 2 (TensorRT-LLM's tokens_per_block).
  std::vector<std::int64_t> block_sizes;
  bool block_size_power_of_two = false;

  bool operator==(const StartupChecks&) const = default;
};

// Reads a "startup" object; unknown keys and wrong values are refused naming `source_name`
// and the key path under `key_prefix`.
StartupChecks read_startup_checks(const nlohmann::json& object, const std::string& source_name,
                                  const std::string& key_prefix);
nlohmann::json startup_checks_to_json(const StartupChecks& checks);

}  // namespace servesim
