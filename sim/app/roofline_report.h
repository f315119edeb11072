#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/hardware/batch_shape.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/model/model_spec.h"

namespace servesim {

// The iteration `servesim roofline` prices: `decode_sequences` sequences decoding one token
// at `decode_context_tokens` of context each (new token included), plus one prefill chunk of
// `prefill_tokens` after `prefill_context_tokens` cached ones when prefill_tokens > 0.
struct RooflineBatch {
  std::int64_t decode_sequences = 0;
  std::int64_t decode_context_tokens = 1024;
  std::int64_t prefill_tokens = 0;
  std::int64_t prefill_context_tokens = 0;
  // > 0: each decoding sequence verifies this many drafts instead (a speculative step: its
  // last token and the drafts over decode_context_tokens - 1 cached ones).
  std::int64_t speculative_tokens = 0;
  // `spans`: the cost model's (IExecutionTimeModel::attention_spans), for windowed layers.
  BatchShape shape(AttentionSpans spans = {}) const;
};

// Either one iteration, or (generate) generating `generated_tokens` after a prompt of
// `prompt_tokens` with and without a KV cache.
struct RooflineQuery {
  RooflineBatch batch;
  struct Generation {
    std::int64_t prompt_tokens = 128;
    std::int64_t generated_tokens = 1;
  };
  std::optional<Generation> generate;
};

// The document `servesim roofline --json` prints (README, "servesim roofline"): the model,
// hardware, parallelism, dtypes and peak balance, then "generate" for a generation, or
// "batch" and the iteration's "operators" (name, flops, bytes, intensity, balance, bound,
// time_s, why; GEMMs also "kernel": family, kind, tile_m, tile_n, m, fitted, description,
// and for grouped ones tokens_per_expert and experts_touched) with its totals and dominant
// bound. Throws UsageError for an empty batch.
// One GEMM operator's kernel as `roofline` shows it: "gemv m=1 (cublas)", "tile 16x128
// (marlin) m=1", "grouped 16-row (cublas), 1.55 tokens/expert over 82.4 experts",
// "tile 128x128 (cublas, fitted) m=4096".
std::string describe_gemm_kernel(const RooflineModel::GemmChoice& choice);
// Why an operator is bound where it is: "memory: 1.90 FLOP/B below its balance 148.20".
std::string describe_bound(const OperatorCost& op);

nlohmann::json roofline_report(const ModelSpec& model, const HardwareProfile& hardware,
                               const RooflineOptions& options, const RooflineQuery& query);

}  // namespace servesim
