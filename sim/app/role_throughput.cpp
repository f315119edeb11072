#include "sim/app/role_throughput.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/app/policies.h"
#include "sim/app/replica_memory.h"
#include "sim/app/replica_pool.h"
#include "sim/app/startup_check.h"
#include "sim/config/model_catalog.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

// Hears nothing: no replica of the pool built here ever runs.
struct SilentObserver final : IServingObserver {
  void on_iteration(const IterationRecord&) override {}
  void on_token_gaps(std::int32_t, double, std::int64_t) override {}
  void on_request_finished(const Request&, SimTime) override {}
  void on_request_rejected(const RequestSpec&, const std::string&, SimTime) override {}
};

std::int64_t whole_tokens(double tokens) {
  return std::max<std::int64_t>(1, std::llround(tokens));
}

}  // namespace

RoleThroughput role_throughput(const nlohmann::json& config_document,
                               const std::filesystem::path& data_root, const RoleLoad& load) {
  RunConfig config = run_config_from_json(config_document, "configuration", policy_menus());
  config.replicas = 1;
  const ModelSpec model = load_catalog_model(data_root, config.model, "model");
  SilentObserver observer;
  const ReplicaPool pool =
      build_replica_pool(config, model, data_root, RngStreams(config.seed), observer, 0);
  const IExecutionTimeModel& cost = *pool.time_model;
  const StartupFacts facts =
      startup_facts(config, model, pool.hardware, planned_capacity(config, model, pool.hardware));
  // Data-parallel ranks each take the per-rank limits (replica_pool.cpp).
  const std::int64_t budget = std::max<std::int64_t>(1, facts.step_tokens * config.data_parallel);
  const std::int64_t prompt = whole_tokens(load.prompt_tokens);
  const std::int64_t output = whole_tokens(load.output_tokens);

  RoleThroughput figures;
  figures.gpus_per_replica = pool.gpus_per_replica;
  // Prefill: steps full of whole prompts, or one prompt in budget-sized chunks.
  if (prompt <= budget) {
    BatchShape step;
    step.spans = cost.attention_spans();
    const std::int64_t prompts = budget / prompt;
    for (std::int64_t i = 0; i < prompts; ++i)
      step.add_prefill(prompt, 0);
    figures.prefill_tokens_per_s =
        static_cast<double>(prompts * prompt) / cost.estimate(step).total_time_s;
  } else {
    double seconds = 0;
    for (std::int64_t done = 0; done < prompt; done += budget) {
      BatchShape step;
      step.spans = cost.attention_spans();
      step.add_prefill(std::min(budget, prompt - done), done, done + budget >= prompt);
      seconds += cost.estimate(step).total_time_s;
    }
    figures.prefill_tokens_per_s = static_cast<double>(prompt) / seconds;
  }

  // Decode: the largest batch the limits allow. A sequence holds its prompt and, on average
  // over its life, half its output; a step feeds each one token (its pipeline's stages one
  // after another, so a sequence's step is pp stages long).
  const std::int64_t context = prompt + output / 2;
  std::int64_t most = std::max<std::int64_t>(1, pool.allocator_capacity_tokens / context);
  if (facts.max_num_seqs) most = std::min(most, *facts.max_num_seqs * config.data_parallel);
  most = std::max<std::int64_t>(1, most);
  const auto step_s = [&](std::int64_t batch) {
    BatchShape step;
    step.add_decodes(batch, batch * context);
    return cost.estimate(step).total_time_s;
  };
  const double stages = static_cast<double>(config.pp);
  std::int64_t batch = most;
  if (load.decode_step_limit_s && stages * step_s(most) > *load.decode_step_limit_s) {
    // The largest batch whose step is within the limit (steps grow with the batch), or 1.
    std::int64_t low = 1;
    std::int64_t high = most;
    while (high - low > 1) {
      const std::int64_t mid = low + (high - low) / 2;
      (stages * step_s(mid) <= *load.decode_step_limit_s ? low : high) = mid;
    }
    batch = low;
  }
  figures.decode_batch = batch;
  figures.decode_step_s = step_s(batch);
  figures.decode_tokens_per_s = static_cast<double>(batch) / figures.decode_step_s;
  return figures;
}

}  // namespace servesim
