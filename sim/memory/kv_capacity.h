#pragma once

#include <cstdint>
#include <vector>

#include "sim/hardware/hardware_profile.h"
#include "sim/model/dtype.h"
#include "sim/model/kv_spec.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"

namespace servesim {

struct KvCapacityOptions {
  Parallelism parallelism;
  DType weight_dtype = DType::BF16;
  DType kv_dtype = DType::BF16;
  double memory_utilization = 0.9;  // share of device memory the engine may use (vLLM's default)
  // Tokens of the largest forward pass the engine must hold activations for (vLLM profiles
  // one pass of max_num_batched_tokens at start-up), and the sequences sampled at once.
  std::int64_t max_batched_tokens = 8192;
  std::int64_t max_sequences = 256;
};

// How one GPU's memory divides, and what that means for the replica. The rule:
//   usable     = memory_utilization x memory capacity
//   activation = runtime reserve of the profile
//                + max_batched_tokens x activation bytes per token of one layer
//                + max_sequences x vocabulary shard x 4 B (fp32 logits)
//   kv per GPU = usable - weights per GPU - activation
// The allocator works in token slots of one size, so a model with several layer groups
// (kv_spec.h) is given an equivalent: a slot is priced at the bytes per token of the groups
// that grow without bound (full attention, MLA latent; the windowed groups when none grows),
// and every one of max_sequences sequences has its recurrent states and windows (W tokens of
// each windowed group) reserved up front; a windowed group is priced into the slot instead
// when that leaves more tokens (a long window over many sequences):
//   reserved   = max_sequences x reserved bytes per sequence
//   tokens     = floor((kv per GPU - reserved) / slot bytes per token)
// (all GPUs of a replica hold the same number of tokens; with data-parallel attention each
// of the parallelism.data ranks holds its own, so the replica holds data times as many).
// Per-group block pools, as vLLM's
// hybrid KV-cache manager keeps them, are not modelled yet.
struct KvCapacity {
  double memory_capacity_bytes_per_gpu = 0;
  double usable_bytes_per_gpu = 0;
  double weight_bytes_per_gpu = 0;
  double activation_reserve_bytes_per_gpu = 0;
  double kv_bytes_per_gpu = 0;
  double kv_bytes_per_token_per_gpu = 0;  // one slot: the growing groups on one GPU
  double kv_reserved_bytes_per_sequence_per_gpu = 0;
  double kv_reserved_bytes_per_gpu = 0;  // max_sequences x the above
  double kv_capacity_bytes = 0;          // per replica: kv_bytes_per_gpu x GPUs
  std::int64_t kv_capacity_tokens = 0;
  std::vector<KvGroup> groups_per_gpu;
};

// How many sequences of `tokens` tokens fit in `kv_bytes` of one GPU, every group counted
// at what such a sequence holds (windows at most W, states once).
std::int64_t sequences_that_fit(const std::vector<KvGroup>& groups_per_gpu, double kv_bytes,
                                std::int64_t tokens);

// Throws InfeasibleError, with the figures, when weights and activations leave no KV room.
KvCapacity plan_kv_capacity(const ModelSpec& model, const HardwareProfile& hardware,
                            const KvCapacityOptions& options);

// The activation bytes per token of one layer held at the peak of a forward pass on one GPU.
double activation_bytes_per_token(const ModelSpec& model, const ShardShape& shard,
                                  DType weight_dtype);

}  // namespace servesim
