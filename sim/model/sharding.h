#pragma once

#include <cstdint>

#include "sim/model/model_spec.h"

namespace servesim {

struct Parallelism {
  std::int64_t tensor = 1;    // TP degree: GPUs sharing every layer
  std::int64_t pipeline = 1;  // PP degree: stages holding consecutive layers
  // Expert parallelism (vLLM's --enable-expert-parallel): the MoE layers' routed experts are
  // spread whole over the GPUs of a stage instead of each being sliced by TP. The EP size is
  // TP x DP as in vLLM.
  bool expert = false;
  // Data-parallel attention ranks (vLLM's --data-parallel-size with --enable-expert-parallel,
  // SGLang's --enable-dp-attention), MoE models with expert parallelism only: each rank runs
  // the attention (and the dense layers) of its share of the sequences on a TP group of its
  // own, holding those sequences' KV; the MoE layers are expert-parallel over all data x
  // tensor GPUs.
  std::int64_t data = 1;
  std::int64_t gpus() const noexcept { return tensor * pipeline * data; }
  std::int64_t expert_degree() const noexcept { return expert ? tensor * data : 1; }
};

// The slice of a model one GPU holds under Megatron-style tensor parallelism (heads, the MLP
// width and the vocabulary split across TP ranks) and pipeline parallelism (layers split into
// stages; the largest stage is the one that matters for memory and time).
struct ShardShape {
  std::int64_t layers = 0;  // layers of the largest pipeline stage
  std::int64_t hidden = 0;
  std::int64_t heads = 0;     // query heads on this GPU
  std::int64_t kv_heads = 0;  // KV heads stored on this GPU; replicated when TP > KV heads
  std::int64_t head_dim = 0;
  std::int64_t intermediate = 0;  // MLP width per expert on this GPU
  std::int64_t vocab = 0;         // vocabulary rows on this GPU
  std::int64_t experts = 1;
  // Routed experts whose weights (at `intermediate` width) this GPU holds: all of them, or
  // experts / data with data-parallel attention (the EP group is data x tensor GPUs).
  std::int64_t experts_held = 1;
  std::int64_t experts_per_token = 1;
  std::int64_t tensor = 1;  // the TP degree the shard was cut for
};

// Validates the degrees against the model (TP must divide the heads, and KV heads must
// divide TP or be divisible by it; PP at most the layer count); throws InputError naming
// --tp / --pp otherwise. Expert parallelism needs an MoE model whose routed experts the EP
// size divides (InputError naming expert_parallel otherwise); data-parallel attention needs
// an MoE model, expert parallelism and one pipeline stage (InputError naming data_parallel).
ShardShape shard_model(const ModelSpec& model, const Parallelism& parallelism);

}  // namespace servesim
