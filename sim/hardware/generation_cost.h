#pragma once

#include <cstdint>

#include "sim/hardware/execution_time_model.h"

namespace servesim {

struct GenerationTotals {
  double flops = 0;
  double time_s = 0;
};

// Generating M tokens after a P-token prompt, with and without a KV cache. With the cache:
// one prefill of P tokens (which yields the first token), then M - 1 single-token decode
// steps over a growing context. Without it: every step re-runs the whole forward pass over
// the prompt and all tokens generated so far, so work grows quadratically in M.
struct GenerationComparison {
  std::int64_t prompt_tokens = 0;
  std::int64_t generated_tokens = 0;
  GenerationTotals with_cache;
  GenerationTotals without_cache;
};

// Requires prompt_tokens >= 1 and generated_tokens >= 1; O(generated_tokens) estimates.
GenerationComparison compare_generation(const IExecutionTimeModel& model,
                                        std::int64_t prompt_tokens, std::int64_t generated_tokens);

}  // namespace servesim
