#include "validation/layer_shapes.h"

#include <algorithm>

#include "sim/config/catalog.h"
#include "sim/model/model_loader.h"

namespace servesim::validation {

ModelShard load_model_shard(const std::filesystem::path& data_root, const std::string& name_or_path,
                            std::int64_t tp, std::int64_t pp) {
  const Catalog models(data_root / "models", "model", "--model");
  ModelShard result;
  result.model = load_model_file(models.resolve(name_or_path));
  result.parallelism = Parallelism{tp, pp};
  result.shard = shard_model(result.model, result.parallelism);
  return result;
}

ExpertSplit split_over_experts(const ModelShard& shard, std::int64_t tokens) {
  const ShardShape& s = shard.shard;
  if (s.experts <= 1) return {1, tokens};
  const std::int64_t routed = tokens * s.experts_per_token;
  const std::int64_t active = std::max<std::int64_t>(1, std::min(s.experts, routed));
  return {active, (routed + active - 1) / active};
}

std::vector<GemmShape> layer_gemms(const ModelShard& shard, std::int64_t tokens,
                                   ElementType dtype) {
  const ShardShape& s = shard.shard;
  const std::int64_t q_width = s.heads * s.head_dim;
  const std::int64_t qkv_width = q_width + 2 * s.kv_heads * s.head_dim;
  const bool gated = shard.model.mlp == MlpKind::Gated;
  const std::int64_t up_width = (gated ? 2 : 1) * s.intermediate;
  const std::int64_t expert_tokens = split_over_experts(shard, tokens).tokens_per_expert;
  return {
      GemmShape{"qkv", tokens, qkv_width, s.hidden, dtype},
      GemmShape{"o", tokens, s.hidden, q_width, dtype},
      GemmShape{"mlp_up", expert_tokens, up_width, s.hidden, dtype},
      GemmShape{"mlp_down", expert_tokens, s.hidden, s.intermediate, dtype},
  };
}

GemmShape lm_head_gemm(const ModelShard& shard, std::int64_t sampled_sequences, ElementType dtype) {
  return GemmShape{"lm_head", sampled_sequences, shard.shard.vocab, shard.shard.hidden, dtype};
}

HeadShape head_shape(const ModelShard& shard) {
  return HeadShape{shard.shard.heads, shard.shard.kv_heads, shard.shard.head_dim};
}

}  // namespace servesim::validation
