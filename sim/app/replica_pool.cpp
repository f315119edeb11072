#include "sim/app/replica_pool.h"

#include <set>
#include <string>

#include "sim/app/policies.h"
#include "sim/app/replica_memory.h"
#include "sim/app/startup_check.h"
#include "sim/config/catalog.h"
#include "sim/config/model_catalog.h"
#include "sim/core/error.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/memory/kv_capacity.h"
#include "sim/model/model_loader.h"
#include "sim/model/model_size.h"
#include "sim/speculative/draft_setup.h"

namespace servesim {
namespace {

// The replica's scheduler parameters. With data-parallel attention each of the `ranks` runs an
// engine core of its own, with its own max_num_seqs and token budget (as vLLM's data-parallel
// ranks do): the replica's one scheduler admits the ranks' sum, and the cost model prices the
// busiest rank's share. The configuration keeps the per-rank values, as vLLM's flags mean them.
PolicyParameters replica_scheduler_parameters(const PolicyParameters& per_rank,
                                              const SchedulerFactory& scheduler,
                                              std::int64_t ranks) {
  if (ranks <= 1) return per_rank;
  PolicyParameters replica = per_rank;
  std::set<std::string> limits = {"max_num_seqs", "max_num_batched_tokens"};
  if (!scheduler.chunked_prefill_budget_key.empty()) {
    limits.insert(scheduler.chunked_prefill_budget_key);
  }
  for (const std::string& name : limits) {
    if (per_rank.has(name)) replica.set(name, per_rank.integer(name) * ranks);
  }
  return replica;
}

}  // namespace

ReplicaPool build_replica_pool(const RunConfig& config, const ModelSpec& model,
                               const std::filesystem::path& data_root, const RngStreams& streams,
                               IServingObserver& observer, std::int32_t first_replica) {
  const MaxLenPolicy max_len_policy = parse_max_len_policy(config.max_len_policy, "max_len_policy");
  ReplicaPool pool;
  pool.hardware = load_hardware_file(
      Catalog(data_root / "hw_profiles", "hardware profile", "hardware").resolve(config.hardware));
  const auto allocators = allocator_registry();
  const auto schedulers = scheduler_registry();
  const auto routers = router_registry();
  const auto cost_models = cost_model_registry();
  const auto& allocator_entry = allocators.find(config.allocator.name, "allocator.name");
  const auto& scheduler_entry = schedulers.find(config.scheduler.name, "scheduler.name");
  const auto& router_entry = routers.find(config.router, "router");
  const auto& cost_model_entry = cost_models.find(config.cost_model.name, "cost_model.name");
  check_policy_pair(config.scheduler.name, config.allocator.name);

  RooflineOptions roofline;
  roofline.parallelism =
      Parallelism{config.tp, config.pp, config.expert_parallel, config.data_parallel};
  roofline.expert_load_imbalance = config.expert_load_imbalance;
  roofline.weight_dtype = weight_dtype_of(config, model);
  roofline.kv_dtype = kv_dtype_of(config, model);
  roofline.engine = config.engine.costs;
  pool.time_model =
      cost_model_entry.factory(model, pool.hardware, roofline, config.cost_model.parameters);

  // The proposer's network and memory, before the KV capacity that its memory shrinks.
  std::optional<DraftSetup> draft;
  if (config.speculative) {
    draft = draft_setup(*config.speculative, model, Parallelism{config.tp, config.pp},
                        roofline.weight_dtype, roofline.kv_dtype, [&](const std::string& name) {
                          return load_catalog_model(data_root, name, "speculative.model");
                        });
    if (draft->network && config.data_parallel > 1) {
      throw InputError("data_parallel",
                       "a proposer network (draft model, EAGLE head, MTP layer) beside "
                       "data-parallel attention is not modelled; use ngram or data_parallel 1");
    }
  }

  // How the KV memory is cut into blocks: per-group pools for windowed or recurrent layers.
  const KvPoolLayout pools =
      kv_pool_layout(kv_groups_per_gpu(model, roofline.parallelism, roofline.kv_dtype),
                     kv_capacity_options(config, model).block_tokens);
  // The replica's memory plan, then the engine's start-up checks on it (as vLLM checks that
  // one max_model_len sequence fits before it serves): the length the engine serves with.
  const std::optional<KvCapacity> planned = planned_capacity(config, model, pool.hardware);
  pool.max_len_tokens = apply_startup_checks(config.engine.startup,
                                             startup_facts(config, model, pool.hardware, planned));
  std::int64_t capacity_tokens = 0;
  if (config.memory.kv_capacity_tokens) {
    capacity_tokens = *config.memory.kv_capacity_tokens;
  } else if (config.memory.kv_capacity_gib) {
    // KV bytes per replica, as the vLLM paper states its setups ("12 GB for KV"); with pools,
    // the GPUs' equal shares of them, cut as vLLM cuts them.
    const double bytes = *config.memory.kv_capacity_gib * 1073741824.0;
    capacity_tokens =
        pools.per_group()
            ? pools.reported_tokens(
                  pools.blocks_in(bytes / static_cast<double>(roofline.parallelism.gpus())))
            : static_cast<std::int64_t>(bytes / kv_bytes_per_token(model, roofline.kv_dtype));
    if (capacity_tokens < 1) {
      throw InfeasibleError("memory.kv_capacity_gib holds less than one token of " + model.name);
    }
  } else {
    capacity_tokens = planned->kv_capacity_tokens;
    if (draft && draft->network) {
      capacity_tokens =
          kv_capacity_beside_draft(planned->kv_bytes_per_gpu, planned->kv_bytes_per_token_per_gpu,
                                   *draft, model.name, draft->network->name);
    }
  }
  SwapLink swap;
  std::int64_t swap_capacity_tokens = 0;
  // Only vllm declares preemption, so only vllm can swap.
  if (config.scheduler.parameters.has("preemption") &&
      config.scheduler.parameters.text("preemption") == "swap") {
    swap.bytes_per_token =
        kv_bytes_per_token_per_gpu(model, roofline.parallelism, roofline.kv_dtype);
    swap_capacity_tokens = static_cast<std::int64_t>(config.memory.swap_space_gib * 1073741824.0 /
                                                     swap.bytes_per_token);
    swap.bytes_per_s =
        pool.hardware.host_link_bandwidth_bytes_per_s * pool.hardware.efficiency.host_link;
  }

  if (config.speculative) {
    Proposer proposer;
    if (draft->network) {
      RooflineOptions draft_options = roofline;
      draft_options.engine = EngineCosts{};  // its passes run inside the target's step
      proposer =
          Proposer(std::make_unique<RooflineModel>(*draft->network, pool.hardware, draft_options));
    }
    pool.speculation =
        std::make_unique<Speculation>(*config.speculative, std::move(proposer), streams);
  }

  PrefixCacheOptions prefix_cache;
  prefix_cache.enabled = config.engine.enable_prefix_caching;
  if (config.memory.host_cache_gib) {
    if (!prefix_cache.enabled) {
      throw InputError("memory.host_cache_gib",
                       "a host tier of the prefix cache needs engine.enable_prefix_caching "
                       "(--enable-prefix-caching)");
    }
    // The replica's KV bytes per token, as kv_capacity_gib counts them; a block loaded back
    // crosses each GPU's host link with its share, as a swap does.
    prefix_cache.host_cache_tokens =
        static_cast<std::int64_t>(*config.memory.host_cache_gib * 1073741824.0 /
                                  kv_bytes_per_token(model, roofline.kv_dtype));
    if (swap.bytes_per_s <= 0) {
      swap.bytes_per_token =
          kv_bytes_per_token_per_gpu(model, roofline.parallelism, roofline.kv_dtype);
      swap.bytes_per_s =
          pool.hardware.host_link_bandwidth_bytes_per_s * pool.hardware.efficiency.host_link;
    }
  }

  const PolicyParameters scheduler_parameters = replica_scheduler_parameters(
      config.scheduler.parameters, scheduler_entry.factory, config.data_parallel);
  for (std::int64_t i = 0; i < config.replicas; ++i) {
    auto allocator = allocator_entry.factory(config.allocator.parameters, capacity_tokens,
                                             pool.max_len_tokens, prefix_cache, pools);
    pool.allocator_capacity_tokens = allocator->capacity_tokens();
    pool.replicas.push_back(std::make_unique<Replica>(
        first_replica + static_cast<std::int32_t>(i), std::move(allocator),
        scheduler_entry.factory.make(scheduler_parameters, swap_capacity_tokens,
                                     pool.max_len_tokens),
        *pool.time_model, config.pp, pool.max_len_tokens, observer, swap, config.engine.bulk_decode,
        max_len_policy));
    if (pool.speculation) pool.replicas.back()->speculate(*pool.speculation);
    if (config.engine.costs.host.overlaps_device && config.pp == 1) {
      pool.replicas.back()->plan_one_step_ahead();
    }
  }
  pool.router = router_entry.factory(streams, config.routing);
  pool.kv_bytes_per_token_held =
      kv_bytes_per_token_held(model, roofline.parallelism, roofline.kv_dtype);
  pool.kv_holders = config.tp * config.pp;
  pool.kv_tensor_shards = kv_tensor_shards(model, config.tp);
  pool.block_tokens = kv_capacity_options(config, model).block_tokens;
  pool.gpus_per_replica = roofline.parallelism.gpus();
  return pool;
}

}  // namespace servesim
