#include "sim/app/policies.h"

#include <array>
#include <string_view>
#include <utility>

#include "sim/cluster/impl/least_kv_router.h"
#include "sim/cluster/impl/least_outstanding_router.h"
#include "sim/cluster/impl/random_router.h"
#include "sim/cluster/impl/round_robin_router.h"
#include "sim/core/error.h"
#include "sim/memory/impl/buddy_address_space.h"
#include "sim/memory/impl/contiguous_allocator.h"
#include "sim/memory/impl/first_fit_address_space.h"
#include "sim/memory/impl/fixed_reservation.h"
#include "sim/memory/impl/max_reservation.h"
#include "sim/memory/impl/oracle_reservation.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/memory/impl/pow2_reservation.h"
#include "sim/scheduler/impl/orca_scheduler.h"
#include "sim/scheduler/impl/sarathi_scheduler.h"
#include "sim/scheduler/impl/static_scheduler.h"
#include "sim/scheduler/impl/vllm_scheduler.h"

namespace servesim {
namespace {

std::unique_ptr<IReservationPolicy> make_reservation(const RunConfig::Allocator& config,
                                                     std::int64_t max_len_tokens) {
  if (config.reservation == "max") return std::make_unique<MaxReservation>(max_len_tokens);
  if (config.reservation == "pow2") return std::make_unique<Pow2Reservation>();
  if (config.reservation == "oracle") return std::make_unique<OracleReservation>();
  if (config.reservation == "fixed") {
    return std::make_unique<FixedReservation>(config.fixed_reservation_tokens);
  }
  throw InputError("allocator.reservation", "unknown reservation policy \"" + config.reservation +
                                                "\" (valid: max, pow2, oracle, fixed)");
}

std::unique_ptr<IAddressSpace> make_address_space(const RunConfig::Allocator& config,
                                                  std::int64_t capacity_tokens) {
  if (config.placement == "buddy") return std::make_unique<BuddyAddressSpace>(capacity_tokens);
  if (config.placement == "first_fit") {
    return std::make_unique<FirstFitAddressSpace>(capacity_tokens);
  }
  throw InputError("allocator.placement", "unknown placement policy \"" + config.placement +
                                              "\" (valid: buddy, first_fit)");
}

}  // namespace

Registry<AllocatorFactory> allocator_registry() {
  Registry<AllocatorFactory> registry("allocator");
  registry.add("paged", "fixed-size KV blocks allocated as tokens arrive (vLLM PagedAttention)",
               [](const RunConfig::Allocator& config, std::int64_t capacity_tokens,
                  std::int64_t /*max_len_tokens*/) {
                 return std::make_unique<PagedAllocator>(capacity_tokens, config.block_size,
                                                         config.watermark);
               });
  registry.add(
      "contiguous",
      "one region per request reserved at admission (reservation: max, pow2, oracle, "
      "fixed; placement: buddy, first_fit)",
      [](const RunConfig::Allocator& config, std::int64_t capacity_tokens,
         std::int64_t max_len_tokens) {
        // Fixed-size reservations larger than the cache could never be granted.
        const std::int64_t fixed = config.reservation == "max"     ? max_len_tokens
                                   : config.reservation == "fixed" ? config.fixed_reservation_tokens
                                                                   : 0;
        if (fixed > capacity_tokens) {
          throw InputError("allocator.reservation", "a reservation of " + std::to_string(fixed) +
                                                        " tokens exceeds the KV capacity of " +
                                                        std::to_string(capacity_tokens) +
                                                        " tokens");
        }
        return std::make_unique<ContiguousAllocator>(make_reservation(config, max_len_tokens),
                                                     make_address_space(config, capacity_tokens));
      });
  return registry;
}

Registry<SchedulerFactory> scheduler_registry() {
  Registry<SchedulerFactory> registry("scheduler");
  registry.add("vllm",
               "iteration-level, prefills first, preemption by recompute of the newest request",
               [](const RunConfig::Scheduler& config, std::int64_t swap_capacity_tokens) {
                 return std::make_unique<VllmScheduler>(
                     VllmSchedulerOptions{config.max_num_seqs, config.max_num_batched_tokens},
                     swap_capacity_tokens);
               });
  registry.add("orca",
               "iteration-level, prefills and decodes mixed in one batch, contiguous reservations",
               [](const RunConfig::Scheduler& config, std::int64_t /*swap_capacity_tokens*/) {
                 return std::make_unique<OrcaScheduler>(
                     OrcaSchedulerOptions{config.max_num_seqs, config.max_num_batched_tokens});
               });
  registry.add(
      "static", "request-level batches of batch_size that run until every member finishes",
      [](const RunConfig::Scheduler& config, std::int64_t /*swap_capacity_tokens*/) {
        return std::make_unique<StaticScheduler>(StaticSchedulerOptions{config.batch_size});
      });
  registry.add("sarathi",
               "chunked prefill under a per-iteration token_budget, decodes first (stall-free)",
               [](const RunConfig::Scheduler& config, std::int64_t /*swap_capacity_tokens*/) {
                 return std::make_unique<SarathiScheduler>(
                     SarathiSchedulerOptions{config.token_budget, config.max_num_seqs});
               });
  return registry;
}

void check_policy_pair(const std::string& scheduler, const std::string& allocator) {
  // vllm is defined by paged allocation. orca, static and sarathi go through the allocator
  // interface only: under contiguous reservations they never preempt, under paging orca and
  // sarathi preempt by recompute and static admits a batch only if it fits to the end.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kPairs{{
      {"vllm", "paged"},
      {"orca", "contiguous"},
      {"orca", "paged"},
      {"static", "contiguous"},
      {"static", "paged"},
      {"sarathi", "paged"},
      {"sarathi", "contiguous"},
  }};
  std::string valid;
  for (const auto& [s, a] : kPairs) {
    if (s == scheduler && a == allocator) return;
    valid += (valid.empty() ? "" : ", ") + std::string(s) + ":" + std::string(a);
  }
  throw InputError("scheduler.name", "scheduler \"" + scheduler +
                                         "\" does not work with allocator \"" + allocator +
                                         "\" (valid pairs: " + valid + ")");
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
