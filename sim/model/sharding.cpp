#include "sim/model/sharding.h"

#include <string>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

ShardShape shard_model(const ModelSpec& model, const Parallelism& parallelism) {
  const std::int64_t tp = parallelism.tensor;
  const std::int64_t pp = parallelism.pipeline;
  if (tp <= 0) throw InputError("--tp", "expected a positive integer, got " + std::to_string(tp));
  if (pp <= 0) throw InputError("--pp", "expected a positive integer, got " + std::to_string(pp));
  if (model.num_heads % tp != 0) {
    throw InputError("--tp", "tensor-parallel degree " + std::to_string(tp) +
                                 " does not divide the " + std::to_string(model.num_heads) +
                                 " attention heads of " + model.name);
  }
  if (model.num_kv_heads % tp != 0 && tp % model.num_kv_heads != 0) {
    throw InputError("--tp", "tensor-parallel degree " + std::to_string(tp) + " and the " +
                                 std::to_string(model.num_kv_heads) + " KV heads of " + model.name +
                                 " do not divide one another");
  }
  if (model.linear_attention && (model.linear_attention->num_key_heads % tp != 0 ||
                                 model.linear_attention->num_value_heads % tp != 0)) {
    throw InputError("--tp", "tensor-parallel degree " + std::to_string(tp) +
                                 " does not divide the " +
                                 std::to_string(model.linear_attention->num_key_heads) +
                                 " linear-attention key heads of " + model.name);
  }
  if (pp > model.num_layers) {
    throw InputError("--pp", "pipeline degree " + std::to_string(pp) + " exceeds the " +
                                 std::to_string(model.num_layers) + " layers of " + model.name);
  }
  const std::int64_t dp = parallelism.data;
  if (dp <= 0) {
    throw InputError("data_parallel", "expected a positive integer, got " + std::to_string(dp));
  }
  if (dp > 1) {
    if (!model.is_moe()) {
      throw InputError("data_parallel", model.name +
                                            " is a dense model: data-parallel attention is for "
                                            "MoE models; run independent copies with replicas");
    }
    if (!parallelism.expert) {
      throw InputError("data_parallel",
                       "data-parallel attention needs expert_parallel (--enable-expert-parallel): "
                       "the MoE layers run expert-parallel over the DP x TP GPUs");
    }
    if (pp > 1) {
      throw InputError("data_parallel", "data-parallel attention with pp " + std::to_string(pp) +
                                            " is not modelled; expected pp 1");
    }
  }
  if (parallelism.expert) {
    if (!model.is_moe()) {
      throw InputError("expert_parallel",
                       model.name +
                           " is a dense model: expert parallelism needs "
                           "routed experts (num_local_experts or n_routed_experts)");
    }
    if (model.num_experts % parallelism.expert_degree() != 0) {
      throw InputError("expert_parallel",
                       "the EP size (= TP x DP) " + std::to_string(parallelism.expert_degree()) +
                           " does not divide the " + std::to_string(model.num_experts) +
                           " routed experts of " + model.name);
    }
  }
  ShardShape s;
  s.layers = ceil_div(model.num_layers, pp);
  s.hidden = model.hidden_size;
  s.heads = model.num_heads / tp;
  s.kv_heads = model.num_kv_heads >= tp ? model.num_kv_heads / tp : 1;
  s.head_dim = model.head_dim;
  s.intermediate = ceil_div(model.intermediate_size, tp);
  s.vocab = ceil_div(model.vocab_size, tp);
  s.experts = model.num_experts;
  s.experts_held = model.num_experts / dp;
  s.experts_per_token = model.experts_per_token;
  s.tensor = tp;
  return s;
}

}  // namespace servesim
