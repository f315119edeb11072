#include "validation/harness_plan.h"

namespace servesim::validation {

GemmPlan plan_gemms(const HarnessOptions& options, const std::filesystem::path& data_root) {
  GemmPlan plan{load_model_shard(data_root, options.model, options.tp, 1), {}};
  for (const std::int64_t tokens : options.tokens) {
    for (GemmShape& gemm : layer_gemms(plan.shard, tokens, options.dtype))
      plan.gemms.push_back(std::move(gemm));
    plan.gemms.push_back(lm_head_gemm(plan.shard, tokens, options.dtype));
  }
  return plan;
}

AttentionPlan plan_attention(const HarnessOptions& options,
                             const std::filesystem::path& data_root) {
  AttentionPlan plan{load_model_shard(data_root, options.model, options.tp, 1), {}, {}};
  const HeadShape heads = head_shape(plan.shard);
  for (const std::int64_t batch : options.batch) {
    for (const std::int64_t context : options.context_tokens) {
      plan.decode.push_back({batch, context, heads, 0, options.dtype});
      if (options.block_size > 0) {
        plan.decode.push_back({batch, context, heads, options.block_size, options.dtype});
      }
    }
  }
  for (const std::int64_t chunk : options.chunk_tokens) {
    for (const std::int64_t cached : options.prefill_context_tokens) {
      plan.prefill.push_back({1, chunk, cached, heads, options.dtype});
    }
  }
  return plan;
}

ReplayPlan plan_replay(const HarnessOptions& options, const std::filesystem::path& data_root) {
  ReplayPlan plan;
  plan.shard = load_model_shard(data_root, options.model, options.tp, options.pp);
  const IterationsFile file =
      read_iterations_csv(options.iterations_path, options.decode_context_tokens);
  plan.iterations = select_evenly(file.rows, options.max_iterations);
  plan.exact_shapes = file.exact_shapes;
  return plan;
}

}  // namespace servesim::validation
