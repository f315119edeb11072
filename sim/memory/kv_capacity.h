#pragma once

#include <cstdint>
#include <vector>

#include "sim/hardware/hardware_profile.h"
#include "sim/memory/kv_pool_layout.h"
#include "sim/model/dtype.h"
#include "sim/model/kv_spec.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"

namespace servesim {

// How an engine counts the memory that is not KV at start-up.
enum class ActivationAccounting {
  // The planner's engine-neutral rule: the hardware profile's runtime reserve, the
  // activations of max_batched_tokens (attention and MLP intermediates together) and fp32
  // logits of max_sequences rows, out of the memory capacity.
  Reserve,
  // vLLM V1's profile run (gpu_worker.determine_available_memory, utils memory_profiling):
  // utilization x the memory CUDA reports, less the weights, the non-torch memory that appears
  // while profiling and the peak of one dummy pass of max_batched_tokens tokens: the larger of
  // the forward's widest phase and the sampler's run over min(max_sequences, tokens) rows of
  // the whole vocabulary (the forward's intermediates are freed by then; its hidden states
  // are not).
  ProfileRun,
};

struct KvCapacityOptions {
  Parallelism parallelism;
  DType weight_dtype = DType::BF16;
  DType kv_dtype = DType::BF16;
  double memory_utilization = 0.9;  // share of device memory the engine may use (vLLM's default)
  // Tokens of the largest forward pass the engine must hold activations for (vLLM profiles
  // one pass of max_num_batched_tokens at start-up), and the sequences sampled at once.
  std::int64_t max_batched_tokens = 8192;
  std::int64_t max_sequences = 256;
  // Tokens per KV block (the paged allocator's block_size): the pools of a model of several
  // layer groups are cut in blocks (kv_pool_layout.h).
  std::int64_t block_tokens = 16;
  ActivationAccounting accounting = ActivationAccounting::Reserve;
  // ProfileRun only: the non-torch memory counted (NCCL buffers, lazily loaded modules; the
  // CUDA context is in the baseline) and the sampler's bytes per row x vocabulary entry.
  double non_torch_bytes = 0;
  double sampler_bytes_per_logit = 0;
};

// How one GPU's memory divides, and what that means for the replica. With Reserve:
//   usable     = memory_utilization x memory capacity
//   activation = runtime reserve of the profile
//                + max_batched_tokens x activation bytes per token of one layer
//                + max_sequences x vocabulary shard x 4 B (fp32 logits)
// with ProfileRun (T = max_batched_tokens, R = min(max_sequences, T), a = activation bytes):
//   usable     = memory_utilization x the memory CUDA reports (memory_visible_bytes)
//   activation = non_torch_bytes + max(T x a x (2 hidden + the wider of the attention phase
//                (QKV + attention output) and the MLP phase (up projection + activation)),
//                T x a x hidden + R x vocabulary x sampler_bytes_per_logit)
// and then
//   kv per GPU = usable - weights per GPU - activation
// A model of one full-attention or MLA group holds kv per GPU / bytes per token tokens. A
// model of several layer groups (kv_spec.h), or of windowed or recurrent layers only, is cut
// into one pool of blocks as vLLM's hybrid KV-cache manager cuts it (kv_pool_layout.h):
//   blocks     = floor(kv per GPU / page bytes / layers per group)
//   tokens     = blocks / groups x block tokens          (vLLM's `GPU KV cache size`)
// and its allocator keeps per-group block tables over that pool (HybridPagedAllocator). All
// GPUs of a replica hold the same number of tokens; with data-parallel attention each of the
// parallelism.data ranks holds its own, so the replica holds data times as many.
struct KvCapacity {
  double memory_capacity_bytes_per_gpu = 0;
  double usable_bytes_per_gpu = 0;
  double weight_bytes_per_gpu = 0;
  double activation_reserve_bytes_per_gpu = 0;
  double kv_bytes_per_gpu = 0;
  // kv_bytes_per_gpu / kv_capacity_tokens: one group's bytes per token; with pools, a block's
  // bytes x groups / block tokens (every layer counted as if it held every token, as vLLM's
  // reported size counts them).
  double kv_bytes_per_token_per_gpu = 0;
  double kv_capacity_bytes = 0;  // per replica: kv_bytes_per_gpu x GPUs
  std::int64_t kv_capacity_tokens = 0;
  std::vector<KvGroup> groups_per_gpu;
  KvPoolLayout pools;            // how the KV memory is cut into blocks
  std::int64_t pool_blocks = 0;  // blocks of the pool (per_group layouts; 0 otherwise)
};

// How many sequences of `tokens` tokens fit in `kv_bytes` of one GPU, every group counted
// at what such a sequence holds (windows at most W, states once).
std::int64_t sequences_that_fit(const std::vector<KvGroup>& groups_per_gpu, double kv_bytes,
                                std::int64_t tokens);
// How many sequences of `tokens` tokens the capacity serves at once: sequences_that_fit for
// one group; with pools, vLLM's `Maximum concurrency` (pool blocks over the blocks a sequence
// holds at most, KvPoolLayout::max_blocks_per_sequence, at max_batched_tokens per step).
std::int64_t sequences_at_length(const KvCapacity& capacity, const KvCapacityOptions& options,
                                 std::int64_t tokens);

// Throws InfeasibleError, with the figures, when weights and activations leave no KV room.
KvCapacity plan_kv_capacity(const ModelSpec& model, const HardwareProfile& hardware,
                            const KvCapacityOptions& options);

// The activation bytes per token of one layer held at the peak of a forward pass on one GPU,
// as the Reserve rule counts them: the attention and MLP intermediates together.
double activation_bytes_per_token(const ModelSpec& model, const ShardShape& shard,
                                  DType weight_dtype);
// The activation bytes the ProfileRun rule counts on one GPU (see KvCapacity).
double profile_run_activation_bytes(const ModelSpec& model, const ShardShape& shard,
                                    DType weight_dtype, const KvCapacityOptions& options);

}  // namespace servesim
