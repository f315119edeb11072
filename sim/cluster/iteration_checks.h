#pragma once

#include <cstdint>

#include "sim/core/sim_time.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/metrics/records.h"
#include "sim/scheduler/batch_plan.h"
#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

// What a replica checks and reports of each iteration it runs.

[[noreturn, gnu::noinline, gnu::cold]] void kv_usage_broken(std::int32_t replica,
                                                            const KvUsage& usage, SimTime now);

// Invariants kv_within_capacity and blocks_conserved: the slots in use within the capacity,
// every category non-negative and together the capacity. Checked every iteration, so the
// message is built out of line, only when a check fails.
inline void check_kv_usage(std::int32_t replica, const KvUsage& usage, SimTime now) {
  if (usage.used() <= usage.capacity_tokens && usage.token_states >= 0 && usage.reserved >= 0 &&
      usage.internal_fragmentation >= 0 && usage.external_fragmentation >= 0 && usage.free >= 0 &&
      usage.cached >= 0 &&
      usage.used() + usage.external_fragmentation + usage.free + usage.cached ==
          usage.capacity_tokens) {
    [[likely]] return;
  }
  kv_usage_broken(replica, usage, now);
}

// Invariant batch_token_budget: the plan within the scheduler's budget.
void check_batch_budget(std::int32_t replica, const BatchPlan& plan, const BatchBudget& budget,
                        SimTime now);

// The iteration's record for the observers (iterations.csv).
IterationRecord iteration_record(std::int32_t replica, SimTime start, SimTime duration,
                                 const BatchPlan& plan, const KvUsage& usage);

}  // namespace servesim
