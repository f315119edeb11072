#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "sim/hardware/hardware_profile.h"
#include "sim/memory/kv_capacity.h"
#include "sim/model/model_spec.h"

namespace servesim {

// What the KV-cache calculator is asked beyond the model.
struct KvReportOptions {
  std::optional<std::int64_t> tokens;  // size a cache for this many tokens (>= 0)
  // The KV dtype always applies; the rest only with a hardware profile.
  KvCapacityOptions capacity;
  // Sequence length for max_sequences_at_max_len (>= 1); default the model's
  // max_position_embeddings.
  std::optional<std::int64_t> max_len;
};

// The document `servesim kv --json` prints (README, "servesim kv"): the model's parameters
// and KV bytes per token, the bytes of `tokens` tokens, and with `hardware` one replica's
// memory plan (weights, activation reserve and KV per GPU, KV capacity in bytes and tokens,
// sequences of max_len tokens that fit). Throws InfeasibleError, with the figures, when the
// weights and activations leave no KV room.
nlohmann::json kv_report(const ModelSpec& model, const HardwareProfile* hardware,
                         const KvReportOptions& options);

}  // namespace servesim
