#include "validation/harness_plan.h"

#include <string>

#include "sim/core/error.h"
#include "validation/fp8_gemm_layout.h"

namespace servesim::validation {
namespace {

void require_k_multiple(const GemmShape& gemm, std::int64_t multiple, const HarnessOptions& options,
                        const std::string& why) {
  if (gemm.k % multiple == 0) return;
  throw InputError("--model " + options.model + " --tp " + std::to_string(options.tp),
                   gemm.op + " has k = " + std::to_string(gemm.k) + ", not a multiple of " +
                       std::to_string(multiple) + " (" + why + ")");
}

}  // namespace

GemmPlan plan_gemms(const HarnessOptions& options, const std::filesystem::path& data_root) {
  GemmPlan plan{load_model_shard(data_root, options.model, options.tp, 1), {}};
  for (const std::int64_t tokens : options.tokens) {
    for (GemmShape& gemm : layer_gemms(plan.shard, tokens, options.dtype)) {
      gemm.fp8 = options.fp8;
      if (gemm.fp8) {
        if (const auto problem = fp8_lt_shape_problem(gemm)) {
          throw InputError(
              "--model " + options.model + " --tp " + std::to_string(options.tp) + " --dtype fp8",
              *problem);
        }
      }
      plan.gemms.push_back(std::move(gemm));
    }
    // Engines that run FP8 layers keep the LM head 16-bit.
    if (!options.fp8) plan.gemms.push_back(lm_head_gemm(plan.shard, tokens, options.dtype));
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

QuantGemmPlan plan_quant_gemms(const HarnessOptions& options,
                               const std::filesystem::path& data_root) {
  QuantGemmPlan plan{load_model_shard(data_root, options.model, options.tp, 1), {}};
  for (const WeightFormat format : options.formats) {
    for (const std::int64_t tokens : options.tokens) {
      for (const GemmShape& gemm : layer_gemms(plan.shard, tokens, options.dtype)) {
        GemmShape full = gemm;
        full.m = tokens;  // an MoE expert's MLP at the token count itself, not its routed share
        if (format == WeightFormat::Int4) {
          require_k_multiple(full, 32, options, "the int4 kernel reads 32 codes per lane");
          require_k_multiple(full, options.group_size, options,
                             "--group-size " + std::to_string(options.group_size));
        } else {
          require_k_multiple(full, 16, options, "the fp8 kernel reads 16 bytes per lane");
        }
        plan.gemms.push_back({full, format, options.group_size});
      }
    }
  }
  return plan;
}

MoeGemmPlan plan_moe_gemms(const HarnessOptions& options, const std::filesystem::path& data_root) {
  MoeGemmPlan plan{load_model_shard(data_root, options.model, options.tp, 1), {}};
  const ShardShape& s = plan.shard.shard;
  if (s.experts <= 1) {
    throw InputError("--model " + options.model, "is not a mixture-of-experts model (moe-gemm)");
  }
  if (s.intermediate % 8 != 0 || s.hidden % 8 != 0) {
    throw InputError("--model " + options.model + " --tp " + std::to_string(options.tp),
                     "expert width " + std::to_string(s.intermediate) + " and hidden size " +
                         std::to_string(s.hidden) +
                         " must be multiples of 8 (16-byte loads of the grouped kernel)");
  }
  const bool gated = plan.shard.model.mlp == MlpKind::Gated;
  const std::int64_t up_width = (gated ? 2 : 1) * s.intermediate;
  for (const std::int64_t tile_rows : options.tile_rows) {
    for (const std::int64_t tokens : options.tokens) {
      const std::vector<std::int32_t> routes =
          route_top_k(tokens, s.experts, s.experts_per_token, options.seed);
      const ExpertGroups groups =
          group_by_expert(routes, s.experts, s.experts_per_token, tile_rows);
      MoeGemmShape up;
      up.op = "mlp_up";
      up.tokens = tokens;
      up.experts = s.experts;
      up.top_k = s.experts_per_token;
      up.n = up_width;
      up.k = s.hidden;
      up.tile_rows = tile_rows;
      up.seed = options.seed;
      up.dtype = options.dtype;
      MoeGemmShape down = up;
      down.op = "mlp_down";
      down.n = s.hidden;
      down.k = s.intermediate;
      down.activation_per_pair = true;
      plan.cases.push_back({up, groups});
      plan.cases.push_back({down, groups});
    }
  }
  return plan;
}

}  // namespace servesim::validation
