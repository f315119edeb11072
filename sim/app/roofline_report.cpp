#include "sim/app/roofline_report.h"

#include <iomanip>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/hardware/generation_cost.h"
#include "sim/scheduler/verification_planning.h"

namespace servesim {
namespace {

std::string fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

nlohmann::json cost_to_json(const IterationCost& cost,
                            const std::vector<RooflineModel::GemmChoice>& kernels) {
  nlohmann::json operators = nlohmann::json::array();
  for (std::size_t i = 0; i < kOperatorCount; ++i) {
    const OperatorCost& op = cost.operators[i];
    if (!op.present()) continue;
    nlohmann::json o = {{"name", operator_name(static_cast<OperatorKind>(i))},
                        {"flops", op.flops},
                        {"bytes", op.bytes},
                        {"arithmetic_intensity_flops_per_byte", op.intensity_flops_per_byte()},
                        {"balance_flops_per_byte", op.balance_flops_per_byte},
                        {"bound", bound_name(op.bound)},
                        {"time_s", op.time_s},
                        {"why", describe_bound(op)}};
    for (const RooflineModel::GemmChoice& g : kernels) {
      if (static_cast<std::size_t>(g.op) != i) continue;
      o["kernel"] = {{"family", gemm_family_name(g.kernel.family)},
                     {"kind", gemm_kernel_kind_name(g.kernel.kind)},
                     {"tile_m", g.kernel.tile_m},
                     {"tile_n", g.kernel.tile_n},
                     {"m", g.m},
                     {"fitted", g.kernel.fitted},
                     {"description", describe_gemm_kernel(g)}};
      if (g.kernel.kind == GemmKernelKind::Grouped) {
        o["kernel"]["tokens_per_expert"] = g.tokens_per_expert;
        o["kernel"]["experts_touched"] = g.experts_touched;
      }
    }
    operators.push_back(std::move(o));
  }
  return {{"operators", operators},
          {"total_flops", cost.total_flops()},
          {"total_bytes", cost.total_bytes()},
          {"total_time_s", cost.total_time_s},
          {"bound", bound_name(cost.dominant_bound())}};
}

}  // namespace

std::string describe_gemm_kernel(const RooflineModel::GemmChoice& g) {
  const std::string family(gemm_family_name(g.kernel.family));
  const std::string m = " m=" + fixed(g.m, 0);
  switch (g.kernel.kind) {
    case GemmKernelKind::Gemv:
      return "gemv" + m + " (" + family + ")";
    case GemmKernelKind::Grouped:
      return "grouped " + fixed(g.kernel.tile_m, 0) + "-row (" + family + "), " +
             fixed(g.tokens_per_expert, 2) + " tokens/expert over " + fixed(g.experts_touched, 1) +
             " experts";
    case GemmKernelKind::Tile:
    case GemmKernelKind::SwapAb:
      break;
  }
  return std::string(gemm_kernel_kind_name(g.kernel.kind)) + " " + fixed(g.kernel.tile_m, 0) + "x" +
         fixed(g.kernel.tile_n, 0) + " (" + family + (g.kernel.fitted ? ", fitted" : "") + ")" + m;
}

std::string describe_bound(const OperatorCost& op) {
  const double intensity = op.intensity_flops_per_byte();
  const double balance = op.balance_flops_per_byte;
  switch (op.bound) {
    case Bound::Compute:
      return "compute: " + fixed(intensity, 2) + " FLOP/B above its balance " + fixed(balance, 2);
    case Bound::Memory:
      return "memory: " + fixed(intensity, 2) + " FLOP/B below its balance " + fixed(balance, 2);
    case Bound::Network:
      return "network: a collective over the link";
    case Bound::Overhead:
      return "overhead: host work and launches beyond the device time";
    case Bound::None:
      break;
  }
  return "";
}

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
  r.update(cost_to_json(roofline.estimate(shape), roofline.gemm_choices(shape)));
  return r;
}

}  // namespace servesim
