#include "sim/app/roofline_report.h"

#include <string>

#include "sim/core/error.h"
#include "sim/hardware/generation_cost.h"
#include "sim/scheduler/verification_planning.h"

namespace servesim {
namespace {

nlohmann::json cost_to_json(const IterationCost& cost) {
  nlohmann::json operators = nlohmann::json::array();
  for (std::size_t i = 0; i < kOperatorCount; ++i) {
    const OperatorCost& op = cost.operators[i];
    if (!op.present()) continue;
    operators.push_back({{"name", operator_name(static_cast<OperatorKind>(i))},
                         {"flops", op.flops},
                         {"bytes", op.bytes},
                         {"arithmetic_intensity_flops_per_byte", op.intensity_flops_per_byte()},
                         {"balance_flops_per_byte", op.balance_flops_per_byte},
                         {"bound", bound_name(op.bound)},
                         {"time_s", op.time_s}});
  }
  return {{"operators", operators},
          {"total_flops", cost.total_flops()},
          {"total_bytes", cost.total_bytes()},
          {"total_time_s", cost.total_time_s},
          {"bound", bound_name(cost.dominant_bound())}};
}

}  // namespace

BatchShape RooflineBatch::shape(AttentionSpans spans) const {
  BatchShape shape;
  shape.spans = spans;
  for (std::int64_t i = 0; i < decode_sequences; ++i) {
    if (speculative_tokens > 0) {
      add_verification(shape, speculative_tokens + 1, decode_context_tokens - 1);
    } else {
      shape.add_decode(decode_context_tokens);
    }
  }
  if (prefill_tokens > 0) shape.add_prefill(prefill_tokens, prefill_context_tokens);
  return shape;
}

nlohmann::json roofline_report(const ModelSpec& model, const HardwareProfile& hardware,
                               const RooflineOptions& options, const RooflineQuery& query) {
  const RooflineModel roofline(model, hardware, options);
  nlohmann::json r = {{"model", model.name},
                      {"hw", hardware.name},
                      {"tp", options.parallelism.tensor},
                      {"pp", options.parallelism.pipeline},
                      {"expert_parallel", options.parallelism.expert},
                      {"data_parallel", options.parallelism.data},
                      {"weight_dtype", dtype_name(options.weight_dtype)},
                      {"kv_dtype", dtype_name(options.kv_dtype)},
                      {"compute_dtype", dtype_name(roofline.compute_dtype())},
                      {"peak_balance_flops_per_byte", roofline.peak_balance_flops_per_byte()}};
  if (query.generate) {
    const GenerationComparison g = compare_generation(roofline, query.generate->prompt_tokens,
                                                      query.generate->generated_tokens);
    r["generate"] = {
        {"prompt_tokens", g.prompt_tokens},
        {"generated_tokens", g.generated_tokens},
        {"with_kv_cache", {{"flops", g.with_cache.flops}, {"time_s", g.with_cache.time_s}}},
        {"without_kv_cache",
         {{"flops", g.without_cache.flops}, {"time_s", g.without_cache.time_s}}},
        {"flops_ratio", g.without_cache.flops / g.with_cache.flops},
        {"time_ratio", g.without_cache.time_s / g.with_cache.time_s}};
    return r;
  }
  const RooflineBatch& batch = query.batch;
  const BatchShape shape = batch.shape(roofline.attention_spans());
  if (shape.empty()) {
    throw UsageError("the batch is empty: give a decode batch or prefill tokens");
  }
  r["batch"] = {{"decode_sequences", shape.decode_sequences},
                {"decode_context_tokens", batch.decode_context_tokens},
                {"prefill_tokens", shape.prefill_tokens},
                {"prefill_context_tokens", batch.prefill_context_tokens}};
  if (batch.speculative_tokens > 0) {
    r["batch"]["speculative_tokens"] = batch.speculative_tokens;
    RooflineBatch plain = batch;
    plain.speculative_tokens = 0;
    r["plain_decode_time_s"] =
        roofline.estimate(plain.shape(roofline.attention_spans())).total_time_s;
  }
  r.update(cost_to_json(roofline.estimate(shape)));
  return r;
}

}  // namespace servesim
