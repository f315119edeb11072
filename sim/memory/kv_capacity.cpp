#include "sim/memory/kv_capacity.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/core/error.h"
#include "sim/model/model_size.h"

namespace servesim {
namespace {

// Memory sizes are binary (GiB), as the kv command and allocators count them.
std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << bytes / 1073741824.0 << " GiB";
  return out.str();
}

}  // namespace

namespace {

// One layer's activation widths per token on one GPU, in elements.
struct LayerWidths {
  double hidden = 0;
  double qkv = 0;               // the QKV projection's output
  double attention_output = 0;  // the attention's output, before o_proj
  double mlp = 0;               // the widest MLP intermediates (up projection plus activation)
};

LayerWidths layer_widths(const ModelSpec& model, const ShardShape& shard) {
  LayerWidths w;
  w.hidden = static_cast<double>(shard.hidden);
  w.qkv = static_cast<double>((shard.heads + 2 * shard.kv_heads) * shard.head_dim);
  w.attention_output = static_cast<double>(shard.heads * shard.head_dim);
  const double up = static_cast<double>((model.mlp == MlpKind::Gated ? 2 : 1) * shard.intermediate);
  const double routed = static_cast<double>(shard.experts_per_token);
  const double tp = static_cast<double>(shard.tensor);
  const double up_rows = model.mlp == MlpKind::Gated ? 3 : 2;
  // Of every routed expert and the shared ones, or of the dense MLP of an MoE model's dense
  // layers if wider.
  w.mlp = routed * (up + static_cast<double>(shard.intermediate));
  if (model.is_moe()) {
    w.mlp += static_cast<double>(model.shared_experts) * up_rows *
             std::ceil(static_cast<double>(model.shared_expert_intermediate_size) / tp);
    w.mlp = std::max(w.mlp, up_rows * std::ceil(static_cast<double>(model.dense_mlp_width()) / tp));
  }
  return w;
}

double activation_element_bytes(DType weight_dtype) {
  return weight_dtype == DType::FP32 ? 4.0 : 2.0;
}

}  // namespace

double activation_bytes_per_token(const ModelSpec& model, const ShardShape& shard,
                                  DType weight_dtype) {
  const LayerWidths w = layer_widths(model, shard);
  // Residual stream, normed input and attention output (3 x hidden), the QKV output and the
  // MLP intermediates, all at once.
  return activation_element_bytes(weight_dtype) * (3 * w.hidden + w.qkv + w.mlp);
}

double profile_run_activation_bytes(const ModelSpec& model, const ShardShape& shard,
                                    DType weight_dtype, const KvCapacityOptions& options) {
  const LayerWidths w = layer_widths(model, shard);
  const double a = activation_element_bytes(weight_dtype);
  const double tokens = static_cast<double>(options.max_batched_tokens);
  // The residual stream and the normed input live through both phases; each phase's own
  // intermediates are freed before the next one's.
  const double forward = tokens * a * (2 * w.hidden + std::max(w.qkv + w.attention_output, w.mlp));
  // The sampler runs on the last position of each request, over the whole vocabulary (the
  // logits are gathered from the vocabulary-parallel ranks), with the hidden states kept.
  const double rows =
      static_cast<double>(std::min(options.max_sequences, options.max_batched_tokens));
  const double sampler = tokens * a * w.hidden + rows * static_cast<double>(model.vocab_size) *
                                                     options.sampler_bytes_per_logit;
  return options.non_torch_bytes + std::max(forward, sampler);
}

KvCapacity plan_kv_capacity(const ModelSpec& model, const HardwareProfile& hardware,
                            const KvCapacityOptions& options) {
  if (!(options.memory_utilization > 0 && options.memory_utilization <= 1)) {
    throw InputError("--mem-util", "expected a fraction in (0, 1]");
  }
  const ShardShape shard = shard_model(model, options.parallelism);
  KvCapacity c;
  c.memory_capacity_bytes_per_gpu = hardware.memory_capacity_bytes;
  c.weight_bytes_per_gpu = weight_bytes_per_gpu(model, options.parallelism, options.weight_dtype);
  if (options.accounting == ActivationAccounting::ProfileRun) {
    c.usable_bytes_per_gpu = options.memory_utilization * hardware.visible_memory_bytes();
    c.activation_reserve_bytes_per_gpu =
        profile_run_activation_bytes(model, shard, options.weight_dtype, options);
  } else {
    c.usable_bytes_per_gpu = options.memory_utilization * hardware.memory_capacity_bytes;
    c.activation_reserve_bytes_per_gpu =
        hardware.runtime_reserved_bytes +
        static_cast<double>(options.max_batched_tokens) *
            activation_bytes_per_token(model, shard, options.weight_dtype) +
        static_cast<double>(options.max_sequences * shard.vocab) * 4.0;
  }
  c.kv_bytes_per_gpu =
      c.usable_bytes_per_gpu - c.weight_bytes_per_gpu - c.activation_reserve_bytes_per_gpu;
  c.groups_per_gpu = kv_groups_per_gpu(model, options.parallelism, options.kv_dtype);
  c.pools = kv_pool_layout(c.groups_per_gpu, options.block_tokens);
  const bool pooled = c.pools.per_group();
  if (pooled) {
    c.pool_blocks = c.pools.blocks_in(c.kv_bytes_per_gpu);
    c.kv_bytes_per_token_per_gpu = c.pools.block_bytes() *
                                   static_cast<double>(c.pools.groups.size()) /
                                   static_cast<double>(c.pools.block_tokens);
  } else {
    c.kv_bytes_per_token_per_gpu = kv_slot_bytes_per_token(c.groups_per_gpu);
  }
  // Room for at least one block of every group (one token of every layer).
  const double least = pooled ? c.pools.block_bytes() * static_cast<double>(c.pools.groups.size())
                              : c.kv_bytes_per_token_per_gpu;
  if (c.kv_bytes_per_gpu < least) {
    std::ostringstream msg;
    msg << model.name << " does not fit on " << hardware.name << " at TP "
        << options.parallelism.tensor << ", PP " << options.parallelism.pipeline << ": "
        << gib(c.weight_bytes_per_gpu) << " of weights and "
        << gib(c.activation_reserve_bytes_per_gpu) << " of activations and runtime per GPU"
        << " leave no KV room in " << gib(c.usable_bytes_per_gpu) << " usable ("
        << options.memory_utilization << " x "
        << gib(c.usable_bytes_per_gpu / options.memory_utilization)
        << "); raise --tp or --pp, use a narrower --weight-dtype, or a larger device";
    throw InfeasibleError(msg.str());
  }
  c.kv_capacity_tokens = pooled ? c.pools.reported_tokens(c.pool_blocks)
                                : static_cast<std::int64_t>(std::floor(
                                      c.kv_bytes_per_gpu / c.kv_bytes_per_token_per_gpu));
  // Data-parallel attention ranks hold KV of their own sequences, not copies.
  c.kv_capacity_tokens *= options.parallelism.data;
  c.kv_capacity_bytes = c.kv_bytes_per_gpu * static_cast<double>(options.parallelism.gpus());
  return c;
}

std::int64_t sequences_that_fit(const std::vector<KvGroup>& groups_per_gpu, double kv_bytes,
                                std::int64_t tokens) {
  const double per_sequence = kv_bytes_for_tokens(groups_per_gpu, tokens);
  if (!(per_sequence > 0) || kv_bytes <= 0) return 0;
  return static_cast<std::int64_t>(std::floor(kv_bytes / per_sequence));
}

std::int64_t sequences_at_length(const KvCapacity& capacity, const KvCapacityOptions& options,
                                 std::int64_t tokens) {
  if (!capacity.pools.per_group()) {
    return sequences_that_fit(capacity.groups_per_gpu, capacity.kv_bytes_per_gpu, tokens);
  }
  const std::int64_t per_sequence =
      capacity.pools.max_blocks_per_sequence(tokens, options.max_batched_tokens);
  return per_sequence > 0 ? capacity.pool_blocks / per_sequence : 0;
}

}  // namespace servesim
