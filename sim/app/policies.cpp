#include "sim/app/policies.h"

#include "sim/cluster/impl/least_kv_router.h"
#include "sim/cluster/impl/least_outstanding_router.h"
#include "sim/cluster/impl/random_router.h"
#include "sim/cluster/impl/round_robin_router.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_scheduler.h"

namespace servesim {

Registry<AllocatorFactory> allocator_registry() {
  Registry<AllocatorFactory> registry("allocator");
  registry.add("paged", "fixed-size KV blocks allocated as tokens arrive (vLLM PagedAttention)",
               [](const RunConfig::Allocator& config, std::int64_t capacity_tokens) {
                 return std::make_unique<PagedAllocator>(capacity_tokens, config.block_size,
                                                         config.watermark);
               });
  return registry;
}

Registry<SchedulerFactory> scheduler_registry() {
  Registry<SchedulerFactory> registry("scheduler");
  registry.add("vllm",
               "iteration-level, prefills first, preemption by recompute of the newest request",
               [](const RunConfig::Scheduler& config) {
                 return std::make_unique<VllmScheduler>(
                     VllmSchedulerOptions{config.max_num_seqs, config.max_num_batched_tokens});
               });
  return registry;
}

Registry<RouterFactory> router_registry() {
  Registry<RouterFactory> registry("router");
  registry
      .add("round_robin", "replicas in turn",
           [](const RngStreams&) { return std::make_unique<RoundRobinRouter>(); })
      .add("least_outstanding", "the replica with the fewest unfinished requests",
           [](const RngStreams&) { return std::make_unique<LeastOutstandingRouter>(); })
      .add("least_kv", "the replica using the smallest share of its KV cache",
           [](const RngStreams&) { return std::make_unique<LeastKvRouter>(); })
      .add("random", "a uniformly random replica (seeded)", [](const RngStreams& streams) {
        return std::make_unique<RandomRouter>(streams.stream("router"));
      });
  return registry;
}

}  // namespace servesim
