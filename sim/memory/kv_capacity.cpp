#include "sim/memory/kv_capacity.h"

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

double activation_bytes_per_token(const ModelSpec& model, const ShardShape& shard,
                                  DType weight_dtype) {
  const double a = weight_dtype == DType::FP32 ? 4.0 : 2.0;
  const double qkv = static_cast<double>((shard.heads + 2 * shard.kv_heads) * shard.head_dim);
  const double up = static_cast<double>((model.mlp == MlpKind::Gated ? 2 : 1) * shard.intermediate);
  const double routed = static_cast<double>(shard.experts_per_token);
  // Residual stream, normed input and attention output (3 x hidden), the QKV output, and the
  // widest MLP intermediates (up projection plus activation) of every routed expert.
  return a * (3 * static_cast<double>(shard.hidden) + qkv +
              routed * (up + static_cast<double>(shard.intermediate)));
}

KvCapacity plan_kv_capacity(const ModelSpec& model, const HardwareProfile& hardware,
                            const KvCapacityOptions& options) {
  if (!(options.memory_utilization > 0 && options.memory_utilization <= 1)) {
    throw InputError("--mem-util", "expected a fraction in (0, 1]");
  }
  const ShardShape shard = shard_model(model, options.parallelism);
  KvCapacity c;
  c.memory_capacity_bytes_per_gpu = hardware.memory_capacity_bytes;
  c.usable_bytes_per_gpu = options.memory_utilization * hardware.memory_capacity_bytes;
  c.weight_bytes_per_gpu = weight_bytes_per_gpu(model, options.parallelism, options.weight_dtype);
  c.activation_reserve_bytes_per_gpu =
      hardware.runtime_reserved_bytes +
      static_cast<double>(options.max_batched_tokens) *
          activation_bytes_per_token(model, shard, options.weight_dtype) +
      static_cast<double>(options.max_sequences * shard.vocab) * 4.0;
  c.kv_bytes_per_gpu =
      c.usable_bytes_per_gpu - c.weight_bytes_per_gpu - c.activation_reserve_bytes_per_gpu;
  c.kv_bytes_per_token_per_gpu =
      kv_bytes_per_token_per_gpu(model, options.parallelism, options.kv_dtype);
  if (c.kv_bytes_per_gpu < c.kv_bytes_per_token_per_gpu) {
    std::ostringstream msg;
    msg << model.name << " does not fit on " << hardware.name << " at TP "
        << options.parallelism.tensor << ", PP " << options.parallelism.pipeline << ": "
        << gib(c.weight_bytes_per_gpu) << " of weights and "
        << gib(c.activation_reserve_bytes_per_gpu)
        << " of activations and runtime per GPU leave no KV room in " << gib(c.usable_bytes_per_gpu)
        << " usable (" << options.memory_utilization << " x " << gib(hardware.memory_capacity_bytes)
        << "); raise --tp or --pp, use a narrower --weight-dtype, or a larger device";
    throw InfeasibleError(msg.str());
  }
  c.kv_capacity_tokens =
      static_cast<std::int64_t>(std::floor(c.kv_bytes_per_gpu / c.kv_bytes_per_token_per_gpu));
  c.kv_capacity_bytes = c.kv_bytes_per_gpu * static_cast<double>(options.parallelism.gpus());
  return c;
}

}  // namespace servesim
