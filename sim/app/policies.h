#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "sim/cluster/router.h"
#include "sim/config/run_config.h"
#include "sim/core/registry.h"
#include "sim/core/rng.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

// The built-in policies, by the names configs use. Each registry is built on demand: no
// global state.
using AllocatorFactory = std::function<std::unique_ptr<IKvCacheAllocator>(
    const RunConfig::Allocator& config, std::int64_t capacity_tokens, std::int64_t max_len_tokens)>;
// `swap_capacity_tokens`: host memory for preemption by swap (0: recompute only).
using SchedulerFactory = std::function<std::unique_ptr<IBatchScheduler>(
    const RunConfig::Scheduler& config, std::int64_t swap_capacity_tokens)>;
using RouterFactory = std::function<std::unique_ptr<IRouter>(const RngStreams& streams)>;

Registry<AllocatorFactory> allocator_registry();
Registry<SchedulerFactory> scheduler_registry();
Registry<RouterFactory> router_registry();

// Each scheduler declares the allocators whose mechanics it works with; any other pair is
// refused with an InputError listing the valid pairs.
void check_policy_pair(const std::string& scheduler, const std::string& allocator);

}  // namespace servesim
