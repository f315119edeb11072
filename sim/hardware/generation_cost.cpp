#include "sim/hardware/generation_cost.h"

#include <string>

#include "sim/core/error.h"

namespace servesim {

GenerationComparison compare_generation(const IExecutionTimeModel& model,
                                        std::int64_t prompt_tokens, std::int64_t generated_tokens) {
  if (prompt_tokens < 1) throw InputError("--prefill-tokens", "expected at least 1 prompt token");
  if (generated_tokens < 1) throw InputError("--generate", "expected at least 1 token");
  GenerationComparison result;
  result.prompt_tokens = prompt_tokens;
  result.generated_tokens = generated_tokens;
  const auto add = [](GenerationTotals& totals, const IterationCost& cost) {
    totals.flops += cost.total_flops();
    totals.time_s += cost.total_time_s;
  };
  for (std::int64_t step = 0; step < generated_tokens; ++step) {
    const std::int64_t known = prompt_tokens + step;  // tokens fed so far
    BatchShape cached;
    cached.spans = model.attention_spans();
    if (step == 0) {
      cached.add_prefill(prompt_tokens, 0);
    } else {
      cached.add_decode(known);
    }
    add(result.with_cache, model.estimate(cached));
    BatchShape recomputed;
    recomputed.spans = model.attention_spans();
    recomputed.add_prefill(known, 0);
    add(result.without_cache, model.estimate(recomputed));
  }
  return result;
}

}  // namespace servesim
