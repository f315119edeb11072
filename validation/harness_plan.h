#pragma once

#include <filesystem>
#include <vector>

#include "validation/expert_routing.h"
#include "validation/harness_options.h"
#include "validation/iterations_csv.h"
#include "validation/layer_shapes.h"
#include "validation/shapes.h"

namespace servesim::validation {

// What each subcommand will measure, worked out on the host before any device work, so
// that bad input (an unknown model, a TP degree that does not divide the heads, a broken
// iterations.csv) is reported the same way with or without a GPU.

// For every token count: the four layer GEMMs and the LM head at m = tokens. With --dtype fp8
// the four layer GEMMs only (engines keep the LM head 16-bit); throws InputError naming --model
// and --tp when an n or k is not a multiple of 16 (fp8_gemm_layout.h).
struct GemmPlan {
  ModelShard shard;
  std::vector<GemmShape> gemms;
};
GemmPlan plan_gemms(const HarnessOptions& options, const std::filesystem::path& data_root);

// Decode attention for every (batch, context) pair, over a contiguous cache and, when the
// block size is positive, over a paged cache holding the same data; prefill attention for
// every (chunk, cached context) pair, batch 1.
struct AttentionPlan {
  ModelShard shard;
  std::vector<DecodeAttentionShape> decode;
  std::vector<PrefillAttentionShape> prefill;
};
AttentionPlan plan_attention(const HarnessOptions& options, const std::filesystem::path& data_root);

// The iterations to replay, spread evenly over the file, at most options.max_iterations.
struct ReplayPlan {
  ModelShard shard;
  std::vector<IterationRow> iterations;
  bool exact_shapes = false;
};
ReplayPlan plan_replay(const HarnessOptions& options, const std::filesystem::path& data_root);

// For every weight format and token count, the four GEMMs of one layer (qkv, o, mlp_up,
// mlp_down; one expert's MLP for a mixture of experts, at the full token count: the kernel's
// behaviour at m, not a routing, is measured). The LM head is left out: serving engines keep
// it 16-bit. Throws InputError naming --model, --tp or --group-size when a k does not fit
// the kernels (int4: a multiple of 32 and of the group size; fp8: of 16).
struct QuantGemmPlan {
  ModelShard shard;
  std::vector<QuantGemmShape> gemms;
};
QuantGemmPlan plan_quant_gemms(const HarnessOptions& options,
                               const std::filesystem::path& data_root);

// For every tile height and token count, the routed experts' mlp_up and mlp_down of one MoE
// layer of the TP shard, with the routing drawn from options.seed (the same tokens route the
// same way at every tile height). Throws InputError naming --model for a dense model or an
// expert width that is not a multiple of 8.
struct MoeGemmCase {
  MoeGemmShape shape;
  ExpertGroups groups;
};
struct MoeGemmPlan {
  ModelShard shard;
  std::vector<MoeGemmCase> cases;
};
MoeGemmPlan plan_moe_gemms(const HarnessOptions& options, const std::filesystem::path& data_root);

}  // namespace servesim::validation
