#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/router.h"
#include "sim/config/run_config.h"
#include "sim/core/policy_parameters.h"
#include "sim/core/registry.h"
#include "sim/core/rng.h"
#include "sim/hardware/execution_time_model.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/memory/address_space.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/memory/kv_pool_layout.h"
#include "sim/memory/reservation_policy.h"
#include "sim/model/model_spec.h"
#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

// The built-in policies, by the names configs use, each with the parameters it reads from its
// config section (scheduler.*, allocator.*, cost_model.*). Each registry is built on demand:
// no global state.
// What a run asks of a prefix cache (engine.enable_prefix_caching, memory.host_cache_gib);
// an allocator that cannot share KV refuses a host tier and otherwise ignores it.
struct PrefixCacheOptions {
  bool enabled = false;
  std::int64_t host_cache_tokens = 0;  // > 0: the host tier's size, in token slots
};
// `pools`: how the model's KV memory is cut into blocks (kv_pool_layout.h); a paged allocator
// keeps per-group block tables when pools.per_group(), and then `capacity_tokens` is vLLM's
// reported size (KvPoolLayout::reported_tokens).
using AllocatorFactory = std::function<std::unique_ptr<IKvCacheAllocator>(
    const PolicyParameters& parameters, std::int64_t capacity_tokens, std::int64_t max_len_tokens,
    const PrefixCacheOptions& prefix_cache, const KvPoolLayout& pools)>;
// A scheduler and the allocators whose mechanics it works with.
struct SchedulerFactory {
  std::vector<std::string> allocators;
  // `swap_capacity_tokens`: host memory for preemption by swap (0: recompute only);
  // `max_len_tokens`: the run's maximum prompt + output length.
  std::function<std::unique_ptr<IBatchScheduler>(const PolicyParameters& parameters,
                                                 std::int64_t swap_capacity_tokens,
                                                 std::int64_t max_len_tokens)>
      make;
  // The key of its per-step token budget when it chunks prompts into that budget (what vLLM's
  // enable_chunked_prefill and max_num_batched_tokens mean); empty: it runs whole prompts.
  std::string chunked_prefill_budget_key = {};
};
using RouterFactory = std::function<std::unique_ptr<IRouter>(const RngStreams& streams,
                                                             const RunConfig::Routing& routing)>;
// The contiguous allocator's sub-policies; they read their parameters from allocator.*.
using ReservationFactory = std::function<std::unique_ptr<IReservationPolicy>(
    const PolicyParameters& parameters, std::int64_t capacity_tokens, std::int64_t max_len_tokens)>;
using PlacementFactory =
    std::function<std::unique_ptr<IAddressSpace>(std::int64_t capacity_tokens)>;
// `deployment` is the parallelism and the weight and KV formats of the run.
using CostModelFactory = std::function<std::unique_ptr<IExecutionTimeModel>(
    const ModelSpec& model, const HardwareProfile& hardware, const RooflineOptions& deployment,
    const PolicyParameters& parameters)>;

Registry<AllocatorFactory> allocator_registry();
Registry<SchedulerFactory> scheduler_registry();
Registry<RouterFactory> router_registry();
Registry<ReservationFactory> reservation_registry();
Registry<PlacementFactory> placement_registry();
Registry<CostModelFactory> cost_model_registry();

// The parameter declarations of the registries a run config's policy sections choose from.
PolicyMenus policy_menus();

// For each registered scheduler, in registry order, the allocators it accepts.
std::vector<std::pair<std::string, std::vector<std::string>>> allocators_by_scheduler();

// The allocator a scheduler runs with when none is named: the first it accepts (orca:
// contiguous), or paged for an unknown scheduler, which the config reader refuses by name.
std::string default_allocator(const std::string& scheduler);

// Refuses a pair the scheduler does not accept with an InputError listing the valid pairs.
void check_policy_pair(const std::string& scheduler, const std::string& allocator);

}  // namespace servesim
