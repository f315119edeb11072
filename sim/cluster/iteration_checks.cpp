#include "sim/cluster/iteration_checks.h"

#include <string>

#include "sim/cluster/serving_observer.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

std::string where(std::int32_t replica) {
  return "replica " + std::to_string(replica) + ": ";
}

}  // namespace

void kv_usage_broken(std::int32_t replica, const KvUsage& usage, SimTime now) {
  if (usage.used() > usage.capacity_tokens) {
    throw InvariantError("kv_within_capacity",
                         where(replica) + std::to_string(usage.used()) + " KV slots in use of " +
                             std::to_string(usage.capacity_tokens),
                         now);
  }
  if (usage.token_states < 0 || usage.reserved < 0 || usage.internal_fragmentation < 0 ||
      usage.external_fragmentation < 0 || usage.free < 0 || usage.cached < 0 ||
      usage.used() + usage.external_fragmentation + usage.free + usage.cached !=
          usage.capacity_tokens) {
    throw InvariantError("blocks_conserved",
                         where(replica) + "KV usage categories do not add up to the capacity of " +
                             std::to_string(usage.capacity_tokens) + " slots",
                         now);
  }
  throw InvariantError("kv_within_capacity", where(replica) + "KV usage out of range", now);
}

void check_batch_budget(std::int32_t replica, const BatchPlan& plan, const BatchBudget& budget,
                        SimTime now) {
  if (plan.shape.prefill_tokens > budget.prefill_tokens || plan.shape.tokens() > budget.tokens ||
      plan.shape.sequences() > budget.sequences) {
    throw InvariantError("batch_token_budget",
                         where(replica) + "a batch of " + std::to_string(plan.shape.sequences()) +
                             " sequences, " + std::to_string(plan.shape.tokens()) + " tokens (" +
                             std::to_string(plan.shape.prefill_tokens) +
                             " prompt) exceeds the scheduler's budget",
                         now);
  }
}

IterationRecord iteration_record(std::int32_t replica, SimTime start, SimTime duration,
                                 const BatchPlan& plan, const KvUsage& usage) {
  IterationRecord record;
  record.replica = replica;
  record.start_s = start.seconds();
  record.duration_s = duration.seconds();
  record.batch_size = static_cast<std::int32_t>(plan.work.size());
  record.prefill_tokens = plan.shape.prefill_tokens;
  record.decode_tokens = plan.shape.decode_sequences;
  record.preempted = static_cast<std::int32_t>(plan.preempted.size());
  record.cached_tokens = plan.cached_tokens;
  set_kv_memory(record, usage);
  const BatchShape& shape = plan.shape;
  record.prefill_sequences = shape.prefill_sequences;
  record.prefill_context_tokens = shape.prefill_context_tokens;
  record.prefill_attention_pairs = shape.prefill_attention_pairs;
  record.prefill_masked_pairs = shape.prefill_masked_pairs;
  record.decode_context_tokens = shape.decode_context_tokens;
  record.sampled_sequences = shape.sampled_sequences;
  return record;
}

}  // namespace servesim
