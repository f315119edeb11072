#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "sim/model/dtype.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"
#include "sim/speculative/speculative_config.h"

namespace servesim {

// What a proposer puts on the target's GPUs: the network each draft step runs (none for
// n-gram lookup) and the memory it takes beside the target's weights and KV.
//  - draft_model: the named model, which must share the target's vocabulary; its weights
//    and KV sharded as the target's (vLLM's draft_tensor_parallel_size defaults to the TP).
//  - eagle: one decoder layer of the target's shape reading the target's hidden states;
//    its steps use the target's embeddings and LM head, so only the layer is new memory.
//  - mtp: the target's next-n layer (num_nextn_predict_layers in its config.json), run
//    once per draft position; its layers are the new memory.
struct DraftSetup {
  std::optional<ModelSpec> network;       // priced for each draft step; none: no GPU work
  double weight_bytes_per_gpu = 0;        // the draft's weights on each GPU
  double kv_bytes_per_token_per_gpu = 0;  // the draft's K and V of one token on each GPU
};

// `load_model` resolves a model name or path as the run's `model` key does. Throws
// InputError for a draft model of another vocabulary, an MTP method on a model without
// next-n layers, and pipeline parallelism (servesim's verification steps are not pipelined).
DraftSetup draft_setup(const SpeculativeConfig& config, const ModelSpec& target,
                       const Parallelism& parallelism, DType weight_dtype, DType kv_dtype,
                       const std::function<ModelSpec(const std::string&)>& load_model);

// The replica's KV capacity in tokens once the draft sits beside the target: each GPU's KV
// memory (`kv_bytes_per_gpu`, what the target alone leaves) less the draft's weights, over
// the K and V one token of both models take. Throws InfeasibleError naming both models when
// the draft leaves no room for a token.
std::int64_t kv_capacity_beside_draft(double kv_bytes_per_gpu,
                                      double target_kv_bytes_per_token_per_gpu,
                                      const DraftSetup& draft, const std::string& target_name,
                                      const std::string& draft_name);

}  // namespace servesim
