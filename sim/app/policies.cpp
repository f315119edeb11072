#include "sim/app/policies.h"

#include <algorithm>

#include "sim/cluster/impl/least_kv_router.h"
#include "sim/cluster/impl/least_outstanding_router.h"
#include "sim/cluster/impl/prefix_aware_router.h"
#include "sim/cluster/impl/random_router.h"
#include "sim/cluster/impl/round_robin_router.h"
#include "sim/core/error.h"
#include "sim/memory/impl/buddy_address_space.h"
#include "sim/memory/impl/contiguous_allocator.h"
#include "sim/memory/impl/first_fit_address_space.h"
#include "sim/memory/impl/fixed_reservation.h"
#include "sim/memory/impl/hybrid_paged_allocator.h"
#include "sim/memory/impl/max_reservation.h"
#include "sim/memory/impl/oracle_reservation.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/memory/impl/pow2_reservation.h"
#include "sim/scheduler/impl/orca_scheduler.h"
#include "sim/scheduler/impl/sarathi_scheduler.h"
#include "sim/scheduler/impl/sglang_scheduler.h"
#include "sim/scheduler/impl/static_scheduler.h"
#include "sim/scheduler/impl/vllm_scheduler.h"
#include "sim/scheduler/impl/vllm_v1_scheduler.h"

namespace servesim {
namespace {

// A reservation sized before the request arrives must fit the cache, or it could never be
// granted: the deployment cannot serve with this policy (infeasible, as a study reports it).
void require_fits(std::int64_t reservation_tokens, std::int64_t capacity_tokens) {
  if (reservation_tokens > capacity_tokens) {
    throw InfeasibleError(
        "allocator.reservation: a reservation of " + std::to_string(reservation_tokens) +
        " tokens exceeds the KV capacity of " + std::to_string(capacity_tokens) + " tokens");
  }
}

// vLLM V0 without chunked prefill (SchedulerConfig): the token limit defaults to
// max(max_model_len, 2048), and one below max_model_len is refused, since a prompt of
// max_model_len tokens could never be scheduled.
std::unique_ptr<IBatchScheduler> make_vllm_v0_scheduler(const PolicyParameters& parameters,
                                                        std::int64_t swap_capacity_tokens,
                                                        std::int64_t max_len_tokens) {
  constexpr std::int64_t kV0MinimumBatchedTokens = 2048;
  std::int64_t batched_tokens = parameters.integer("max_num_batched_tokens");
  if (batched_tokens == 0) {
    batched_tokens = std::max(max_len_tokens, kV0MinimumBatchedTokens);
  } else if (batched_tokens < max_len_tokens) {
    throw InputError("scheduler.max_num_batched_tokens",
                     std::to_string(batched_tokens) + " is smaller than max_len (" +
                         std::to_string(max_len_tokens) +
                         "): a prompt of max_len tokens could never be scheduled, which "
                         "vLLM V0 refuses too; raise it or lower max_len");
  }
  return std::make_unique<VllmScheduler>(
      VllmSchedulerOptions{parameters.integer("max_num_seqs"), batched_tokens},
      swap_capacity_tokens);
}

// vLLM V1: long_prefill_token_threshold defaults to 4% of max_model_len when
// max_num_partial_prefills > 1 (SchedulerConfig; else no limit), and above max_model_len it is
// refused then.
std::unique_ptr<IBatchScheduler> make_vllm_v1_scheduler(const PolicyParameters& parameters,
                                                        std::int64_t /*swap_capacity_tokens*/,
                                                        std::int64_t max_len_tokens) {
  std::int64_t threshold = parameters.integer("long_prefill_token_threshold");
  const bool partial_prefills = parameters.integer("max_num_partial_prefills") > 1;
  if (threshold == 0) {
    // vLLM's SchedulerConfig: int(max_model_len * 0.04), 0 (no limit) otherwise.
    threshold = partial_prefills
                    ? static_cast<std::int64_t>(static_cast<double>(max_len_tokens) * 0.04)
                    : 0;
  } else if (partial_prefills && threshold > max_len_tokens) {
    throw InputError("scheduler.long_prefill_token_threshold",
                     std::to_string(threshold) + " tokens exceed max_len (" +
                         std::to_string(max_len_tokens) +
                         ") with max_num_partial_prefills > 1, which vLLM refuses");
  }
  return std::make_unique<VllmV1Scheduler>(VllmV1SchedulerOptions{
      parameters.integer("max_num_seqs"), parameters.integer("max_num_batched_tokens"), threshold});
}

}  // namespace

Registry<ReservationFactory> reservation_registry() {
  Registry<ReservationFactory> registry("reservation policy");
  registry
      .add("max", "the maximum length (prompt + output at most), as Orca and FasterTransformer",
           [](const PolicyParameters&, std::int64_t capacity_tokens, std::int64_t max_len_tokens) {
             require_fits(max_len_tokens, capacity_tokens);
             return std::make_unique<MaxReservation>(max_len_tokens);
           })
      .add("pow2", "the prompt plus the next power of two of the output",
           [](const PolicyParameters&, std::int64_t, std::int64_t) {
             return std::make_unique<Pow2Reservation>();
           })
      .add("oracle", "exactly the prompt plus the output (known in advance)",
           [](const PolicyParameters&, std::int64_t, std::int64_t) {
             return std::make_unique<OracleReservation>();
           })
      .add("fixed", "fixed_reservation_tokens for every request",
           {ParameterSpec::positive_integer("fixed_reservation_tokens", 2048,
                                            "tokens reserved per request")},
           [](const PolicyParameters& parameters, std::int64_t capacity_tokens, std::int64_t) {
             const std::int64_t tokens = parameters.integer("fixed_reservation_tokens");
             require_fits(tokens, capacity_tokens);
             return std::make_unique<FixedReservation>(tokens);
           });
  return registry;
}

Registry<PlacementFactory> placement_registry() {
  Registry<PlacementFactory> registry("placement policy");
  registry
      .add("buddy", "power-of-two buddy allocator, as the vLLM paper's Orca baselines",
           [](std::int64_t capacity_tokens) {
             return std::make_unique<BuddyAddressSpace>(capacity_tokens);
           })
      .add("first_fit", "the lowest free range that fits", [](std::int64_t capacity_tokens) {
        return std::make_unique<FirstFitAddressSpace>(capacity_tokens);
      });
  return registry;
}

Registry<AllocatorFactory> allocator_registry() {
  Registry<AllocatorFactory> registry("allocator");
  registry.add("paged", "fixed-size KV blocks allocated as tokens arrive (vLLM PagedAttention)",
               {ParameterSpec::positive_integer("block_size", 16, "tokens per KV block"),
                ParameterSpec::unit_fraction(
                    "watermark", 0.01,
                    "share of the blocks kept free when admitting prompts, for decode growth")},
               [](const PolicyParameters& parameters, std::int64_t capacity_tokens,
                  std::int64_t /*max_len_tokens*/, const PrefixCacheOptions& prefix_cache,
                  const KvPoolLayout& pools) -> std::unique_ptr<IKvCacheAllocator> {
                 const std::int64_t block_size = parameters.integer("block_size");
                 if (pools.per_group()) {
                   // Windowed or recurrent layer groups: per-group tables over one pool
                   // (docs/models.md, "Per-group block pools").
                   if (prefix_cache.host_cache_tokens > 0) {
                     throw InputError("memory.host_cache_gib",
                                      "a host tier of the prefix cache is not modelled for a "
                                      "model with windowed or recurrent layer groups");
                   }
                   return std::make_unique<HybridPagedAllocator>(
                       pools, pools.blocks_for_reported_tokens(capacity_tokens),
                       parameters.number("watermark"), prefix_cache.enabled);
                 }
                 return std::make_unique<PagedAllocator>(
                     capacity_tokens, block_size, parameters.number("watermark"),
                     prefix_cache.enabled, prefix_cache.host_cache_tokens / block_size);
               });
  registry.add(
      "contiguous", "one region per request reserved at admission",
      {ParameterSpec::policy("reservation", reservation_registry().menu(), "max",
                             "tokens reserved per request at admission"),
       ParameterSpec::policy("placement", placement_registry().menu(), "buddy",
                             "where in the address space a region goes")},
      // Contiguous regions share nothing: prefix caching has no effect.
      [](const PolicyParameters& parameters, std::int64_t capacity_tokens,
         std::int64_t max_len_tokens, const PrefixCacheOptions& prefix_cache,
         const KvPoolLayout& /*pools*/) -> std::unique_ptr<IKvCacheAllocator> {
        if (prefix_cache.host_cache_tokens > 0) {
          throw InputError("memory.host_cache_gib",
                           "a host tier of the prefix cache needs the paged allocator; contiguous "
                           "regions share nothing");
        }
        auto reservation = reservation_registry()
                               .find(parameters.text("reservation"), "allocator.reservation")
                               .factory(parameters, capacity_tokens, max_len_tokens);
        auto space = placement_registry()
                         .find(parameters.text("placement"), "allocator.placement")
                         .factory(capacity_tokens);
        return std::make_unique<ContiguousAllocator>(std::move(reservation), std::move(space));
      });
  return registry;
}

Registry<SchedulerFactory> scheduler_registry() {
  const auto max_num_seqs =
      ParameterSpec::positive_integer("max_num_seqs", 256, "running requests per replica at most");
  Registry<SchedulerFactory> registry("scheduler");
  // vllm is defined by paged allocation. orca, static and sarathi go through the allocator
  // interface only: under contiguous reservations they never preempt, under paging orca and
  // sarathi preempt by recompute and static admits a batch only if it fits to the end. The
  // first allocator a scheduler lists is its default: orca's is contiguous (with the
  // contiguous allocator's default max reservation), as Orca reserves max-length slots.
  registry.add(
      "vllm", "iteration-level, prefills first, preemption by recompute of the newest request",
      {max_num_seqs,
       ParameterSpec::nonnegative_integer(
           "max_num_batched_tokens", 0,
           "tokens computed in one iteration at most, at least max_len; 0 (the default): "
           "max(max_len, 2048), as vLLM V0 without chunked prefill"),
       ParameterSpec::choice(
           "preemption", {"recompute", "swap"}, "recompute",
           "what a preempted request's KV does: dropped and recomputed, or swapped to host "
           "memory (memory.swap_space_gib) over the host link")},
      {{"paged"}, make_vllm_v0_scheduler});
  registry.add(
      "orca", "iteration-level, prefills and decodes mixed in one batch, contiguous reservations",
      {max_num_seqs,
       ParameterSpec::positive_integer("max_num_batched_tokens", 8192,
                                       "prompt tokens admitted in one iteration at most")},
      {{"contiguous", "paged"},
       [](const PolicyParameters& parameters, std::int64_t /*swap_capacity_tokens*/,
          std::int64_t /*max_len_tokens*/) {
         return std::make_unique<OrcaScheduler>(OrcaSchedulerOptions{
             parameters.integer("max_num_seqs"), parameters.integer("max_num_batched_tokens")});
       }});
  registry.add("static", "request-level batches of batch_size that run until every member finishes",
               {ParameterSpec::positive_integer("batch_size", 8, "requests per batch")},
               {{"paged", "contiguous"},
                [](const PolicyParameters& parameters, std::int64_t /*swap_capacity_tokens*/,
                   std::int64_t /*max_len_tokens*/) {
                  return std::make_unique<StaticScheduler>(
                      StaticSchedulerOptions{parameters.integer("batch_size")});
                }});
  registry.add(
      "sarathi", "chunked prefill under a per-iteration token_budget, decodes first (stall-free)",
      {ParameterSpec::positive_integer("token_budget", 512,
                                       "tokens computed per iteration at most"),
       max_num_seqs,
       ParameterSpec::nonnegative_integer(
           "batch_wait_timeout_iters", 0,
           "plans in a row that hold new prompts back while others decode (TensorRT-LLM's batch "
           "waiting; 0: off)"),
       ParameterSpec::unit_fraction("batch_wait_max_tokens_ratio", 0,
                                    "share of token_budget a plan's tokens reach to stop "
                                    "holding prompts back (0: off)")},
      {{"paged", "contiguous"},
       [](const PolicyParameters& parameters, std::int64_t /*swap_capacity_tokens*/,
          std::int64_t /*max_len_tokens*/) {
         return std::make_unique<SarathiScheduler>(SarathiSchedulerOptions{
             parameters.integer("token_budget"), parameters.integer("max_num_seqs"),
             parameters.integer("batch_wait_timeout_iters"),
             parameters.number("batch_wait_max_tokens_ratio")});
       },
       "token_budget"});
  // The defaults are vLLM 0.15's for its API server on a GPU of 70 GiB or more other than the
  // A100 (EngineArgs.get_batch_defaults; elsewhere 2048 tokens and 256 sequences).
  registry.add(
      "vllm_v1",
      "vLLM V1: one token budget per step, running requests first, prompts chunked into the rest",
      {ParameterSpec::positive_integer("max_num_seqs", 1024,
                                       "running requests per replica at most"),
       ParameterSpec::positive_integer(
           "max_num_batched_tokens", 8192,
           "tokens computed in one step at most, decodes and prompt chunks together"),
       ParameterSpec::nonnegative_integer(
           "long_prefill_token_threshold", 0,
           "tokens one request computes in one step at most; 0 (vLLM's default): no limit, or "
           "4% of max_len when max_num_partial_prefills > 1"),
       ParameterSpec::positive_integer(
           "max_num_partial_prefills", 1,
           "prompts partially prefilled at once, in name: vLLM 0.15's V1 scheduler does not "
           "enforce it, and above 1 it only sets the default long_prefill_token_threshold")},
      {{"paged"}, make_vllm_v1_scheduler, "max_num_batched_tokens"});
  registry.add(
      "sglang",
      "SGLang: prefill batches first and apart from decode batches, output tokens reserved at "
      "a decaying ratio, retraction when decode memory runs out",
      {ParameterSpec::nonnegative_integer(
           "max_running_requests", 0,
           "requests in the decode batch at most; 0 (SGLang's default): half the KV pool's "
           "tokens, within its request pool of 2,048 to 4,096"),
       ParameterSpec::positive_integer("max_prefill_tokens", 16384,
                                       "tokens one prefill batch computes at most"),
       ParameterSpec::nonnegative_integer(
           "chunked_prefill_size", 8192,
           "tokens of one prompt a prefill batch computes at most; 0: whole prompts")},
      {{"paged"},
       [](const PolicyParameters& parameters, std::int64_t /*swap_capacity_tokens*/,
          std::int64_t max_len_tokens) {
         SglangSchedulerOptions options;
         options.max_running_requests = parameters.integer("max_running_requests");
         options.max_prefill_tokens = parameters.integer("max_prefill_tokens");
         options.chunked_prefill_size = parameters.integer("chunked_prefill_size");
         options.context_len_tokens = max_len_tokens;
         return std::make_unique<SglangScheduler>(options);
       },
       "max_prefill_tokens"});
  return registry;
}

Registry<CostModelFactory> cost_model_registry() {
  Registry<CostModelFactory> registry("cost model");
  registry.add("roofline",
               "operators priced at their compute or memory ceiling, plus host costs (servesim "
               "roofline)",
               [](const ModelSpec& model, const HardwareProfile& hardware,
                  const RooflineOptions& deployment, const PolicyParameters&) {
                 return std::make_unique<RooflineModel>(model, hardware, deployment);
               });
  return registry;
}

PolicyMenus policy_menus() {
  return {scheduler_registry().menu(), allocator_registry().menu(), cost_model_registry().menu()};
}

std::vector<std::pair<std::string, std::vector<std::string>>> allocators_by_scheduler() {
  std::vector<std::pair<std::string, std::vector<std::string>>> table;
  const auto schedulers = scheduler_registry();
  for (const auto& entry : schedulers.entries())
    table.emplace_back(entry.name, entry.factory.allocators);
  return table;
}

std::string default_allocator(const std::string& scheduler) {
  for (const auto& [s, allocators] : allocators_by_scheduler()) {
    if (s == scheduler && !allocators.empty()) return allocators.front();
  }
  return "paged";
}

void check_policy_pair(const std::string& scheduler, const std::string& allocator) {
  std::string valid;
  for (const auto& [s, allocators] : allocators_by_scheduler()) {
    for (const auto& a : allocators) {
      if (s == scheduler && a == allocator) return;
      valid += (valid.empty() ? "" : ", ") + s + ":" + a;
    }
  }
  throw InputError("scheduler.name", "scheduler \"" + scheduler +
                                         "\" does not work with allocator \"" + allocator +
                                         "\" (valid pairs: " + valid + ")");
}

Registry<RouterFactory> router_registry() {
  Registry<RouterFactory> registry("router");
  registry
      .add("round_robin", "replicas in turn",
           [](const RngStreams&, const RunConfig::Routing&) {
             return std::make_unique<RoundRobinRouter>();
           })
      .add("least_outstanding", "the replica with the fewest unfinished requests",
           [](const RngStreams&, const RunConfig::Routing&) {
             return std::make_unique<LeastOutstandingRouter>();
           })
      .add("least_kv", "the replica using the smallest share of its KV cache",
           [](const RngStreams&, const RunConfig::Routing&) {
             return std::make_unique<LeastKvRouter>();
           })
      .add("prefix_aware",
           "the replica whose prefix cache holds most of the prompt, less its load "
           "(prefix caching): prefix_weight x share of the prompt cached - load_weight x "
           "outstanding / the busiest's (section routing; 2 and 1 by default)",
           [](const RngStreams&, const RunConfig::Routing& routing) {
             return std::make_unique<PrefixAwareRouter>(
                 PrefixAwareWeights{routing.prefix_weight, routing.load_weight});
           })
      .add("random", "a uniformly random replica (seeded)",
           [](const RngStreams& streams, const RunConfig::Routing&) {
             return std::make_unique<RandomRouter>(streams.stream("router"));
           });
  return registry;
}

}  // namespace servesim
