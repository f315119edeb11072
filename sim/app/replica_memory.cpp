#include "sim/app/replica_memory.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"
#include "sim/model/model_size.h"

namespace servesim {

DType kv_dtype_of(const RunConfig& config, const ModelSpec& model) {
  if (config.kv_dtype == "auto") return auto_kv_dtype(model);
  return parse_kv_dtype(config.kv_dtype, "kv_dtype");
}

DType weight_dtype_of(const RunConfig& config, const ModelSpec& model) {
  if (config.weight_dtype == "auto") return auto_weight_dtype(model);
  return parse_dtype(config.weight_dtype, "weight_dtype");
}

std::int64_t planned_sequences(const PolicyParameters& scheduler) {
  constexpr std::int64_t kUncappedSequences = 256;
  return scheduler.has("max_num_seqs") ? scheduler.integer("max_num_seqs") : kUncappedSequences;
}

std::int64_t block_tokens_of(const RunConfig& config) {
  return config.allocator.parameters.has("block_size")
             ? config.allocator.parameters.integer("block_size")
             : 1;
}

KvCapacityOptions kv_capacity_options(const RunConfig& config, const ModelSpec& model) {
  KvCapacityOptions o;
  o.parallelism = Parallelism{config.tp, config.pp, config.expert_parallel, config.data_parallel};
  o.weight_dtype = weight_dtype_of(config, model);
  o.kv_dtype = kv_dtype_of(config, model);
  o.memory_utilization = config.memory.mem_util;
  o.max_batched_tokens = config.memory.max_batched_tokens_reserve;
  o.max_sequences = planned_sequences(config.scheduler.parameters);
  if (config.memory.accounting == "profile_run") {
    // vLLM profiles one pass of the scheduler's token budget.
    o.accounting = ActivationAccounting::ProfileRun;
    o.max_batched_tokens = step_tokens_of(config, max_len_of(config, model));
    o.non_torch_bytes = config.memory.non_torch_bytes;
    o.sampler_bytes_per_logit = config.memory.sampler_bytes_per_logit;
  }
  // The pools of a model of several layer groups are cut in the paged allocator's blocks; an
  // allocator without blocks keeps the planner's default.
  if (config.allocator.parameters.has("block_size")) {
    o.block_tokens = config.allocator.parameters.integer("block_size");
  }
  return o;
}

std::optional<KvCapacity> planned_capacity(const RunConfig& config, const ModelSpec& model,
                                           const HardwareProfile& hardware) {
  if (config.memory.kv_capacity_tokens || config.memory.kv_capacity_gib) return std::nullopt;
  return plan_kv_capacity(model, hardware, kv_capacity_options(config, model));
}

std::int64_t max_len_of(const RunConfig& config, const ModelSpec& model) {
  const std::int64_t max_len = config.max_len.value_or(model.max_position_embeddings);
  // As vLLM refuses a max_model_len beyond the model's positions (unless told otherwise by
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN): positions past them were never trained.
  if (max_len > model.max_position_embeddings) {
    const std::string positions = std::to_string(model.max_position_embeddings);
    throw InputError("max_len", std::to_string(max_len) + " tokens exceed the " +
                                    "max_position_embeddings of " + config.model + " (" +
                                    positions + "); expected at most " + positions);
  }
  return max_len;
}

std::int64_t step_tokens_of(const RunConfig& config, std::int64_t max_len_tokens) {
  const PolicyParameters& p = config.scheduler.parameters;
  for (const char* key : {"max_num_batched_tokens", "token_budget"}) {
    if (p.has(key) && p.integer(key) > 0) return p.integer(key);
  }
  if (p.has("max_num_batched_tokens")) {
    constexpr std::int64_t kV0MinimumBatchedTokens = 2048;  // vllm's 0: max(max_len, 2048)
    return std::max(max_len_tokens, kV0MinimumBatchedTokens);
  }
  return config.memory.max_batched_tokens_reserve;
}

}  // namespace servesim
