#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace servesim {

// The load rate matching sizes a role for: requests of the mean prompt and output.
struct RoleLoad {
  double prompt_tokens = 0;
  double output_tokens = 0;
  // A decode step may take at most this long (the TPOT limit a search must meet); none: any.
  std::optional<double> decode_step_limit_s;
};

// What one replica of a configuration serves at best, from its cost model and KV capacity
// alone, without simulating (docs/disaggregation.md, "The search"). Both are upper bounds of
// what a run reaches: every step full, no queueing, no interference between the phases.
struct RoleThroughput {
  // Prompt tokens/s prefilling prompts of the mean length back to back, each step filled to
  // the scheduler's token budget (a longer prompt in budget-sized chunks).
  double prefill_tokens_per_s = 0;
  // Output tokens/s at `decode_batch` sequences of the mean context (prompt plus half the
  // output), the most that max_num_seqs, the KV capacity and the step limit allow (at least
  // one), each step taking `decode_step_s`.
  double decode_tokens_per_s = 0;
  std::int64_t decode_batch = 0;
  double decode_step_s = 0;
  std::int64_t gpus_per_replica = 0;
};

// The figures of one replica of `config_document` (an aggregated configuration, as
// assemble_config returns it; a disaggregated one's role through role_document). Refuses
// what a run would (InputError, InfeasibleError).
RoleThroughput role_throughput(const nlohmann::json& config_document,
                               const std::filesystem::path& data_root, const RoleLoad& load);

}  // namespace servesim
