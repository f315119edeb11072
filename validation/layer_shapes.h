#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"
#include "validation/shapes.h"

namespace servesim::validation {

// A model as one GPU holds it: the spec, the parallelism and the shard the simulator prices.
struct ModelShard {
  ModelSpec model;
  Parallelism parallelism;
  ShardShape shard;
};

// Resolves `name_or_path` in <data_root>/models like `servesim --model`, and shards it with
// the simulator's own rules (errors name --model, --tp or --pp).
ModelShard load_model_shard(const std::filesystem::path& data_root, const std::string& name_or_path,
                            std::int64_t tp, std::int64_t pp);

// The GEMMs of one decoder layer of one TP shard for `tokens` tokens, in execution order:
// qkv (n = (heads + 2 kv_heads) x head_dim, k = hidden), o (n = hidden, k = heads x head_dim),
// mlp_up (n = 2 x intermediate when gated, else intermediate; k = hidden), mlp_down
// (n = hidden, k = intermediate). For a mixture of experts the MLP shapes are one expert's,
// with m the tokens that expert receives.
std::vector<GemmShape> layer_gemms(const ModelShard& shard, std::int64_t tokens, ElementType dtype);

// The LM head over `sampled_sequences` rows: n = the vocabulary rows of this shard.
GemmShape lm_head_gemm(const ModelShard& shard, std::int64_t sampled_sequences, ElementType dtype);

// How a mixture-of-experts layer spreads `tokens` tokens: with top-k routing assumed
// uniform, min(E, tokens x k) experts are active, each with an equal share (rounded up).
struct ExpertSplit {
  std::int64_t active_experts = 1;
  std::int64_t tokens_per_expert = 0;
};
ExpertSplit split_over_experts(const ModelShard& shard, std::int64_t tokens);

HeadShape head_shape(const ModelShard& shard);

}  // namespace servesim::validation
