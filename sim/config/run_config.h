#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/disaggregation_config.h"
#include "sim/core/policy_parameters.h"
#include "sim/engine/engine_costs.h"
#include "sim/engine/startup_checks.h"
#include "sim/speculative/speculative_config.h"

namespace servesim {

// Everything one `servesim run` needs, typed and validated. Built from a JSON document whose
// keys are exactly these fields and, in each policy section, the chosen policy's parameters
// (any other key is an error); run_config_to_json writes it back with every default filled in
// (resolved_config.json), which reads back as the same config.
struct RunConfig {
  std::string model = "llama-3-8b";   // short name or config.json path
  std::string hardware = "h100-sxm";  // short name or profile path
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  // Expert parallelism (vLLM's --enable-expert-parallel): MoE experts spread whole over the
  // TP GPUs (EP size = TP), with dispatch and combine all-to-alls; the busiest GPU's routed
  // tokens are expert_load_imbalance (>= 1) times the even share.
  bool expert_parallel = false;
  double expert_load_imbalance = 1.0;
  // Data-parallel attention ranks (vLLM's --data-parallel-size with --enable-expert-parallel):
  // an MoE replica of data_parallel x tp GPUs runs attention as data_parallel ranks of tp GPUs
  // each, with its own sequences and KV, and the MoE layers expert-parallel over all of them.
  std::int64_t data_parallel = 1;
  std::int64_t replicas = 1;
  std::string router = "round_robin";
  // The prefix_aware router's score weights (sim/cluster/impl/prefix_aware_router.h): the
  // `routing` section, read only with that router.
  struct Routing {
    double prefix_weight = 2.0;  // per share of the prompt a replica's cache holds
    double load_weight = 1.0;    // per unfinished request, relative to the busiest replica's
  } routing;
  std::string weight_dtype = "auto";
  std::string kv_dtype = "auto";
  std::uint64_t seed = 0;
  std::optional<std::int64_t> max_len;  // default: the model's max_position_embeddings
  // A request whose prompt + output passes max_len: "cut" (its output stops at max_len) or
  // "reject" (the whole request is rejected); see sim/cluster/max_len_admission.h.
  std::string max_len_policy = "cut";

  struct Memory {
    double mem_util = 0.9;
    std::optional<std::int64_t> kv_capacity_tokens;  // overrides the computed capacity
    std::optional<double> kv_capacity_gib;           // the same, as KV bytes per replica in GiB
    std::int64_t max_batched_tokens_reserve = 8192;  // activation reserve: see servesim kv
    // How the engine counts what is not KV (kv_capacity.h): "reserve" (the runtime reserve
    // and max_batched_tokens_reserve) or "profile_run" (vLLM V1's start-up profile at the
    // scheduler's token budget), with profile_run's non-torch bytes and sampler bytes per
    // logit. The engine profile decides them unless given.
    std::string accounting = "reserve";
    double non_torch_bytes = 0;
    double sampler_bytes_per_logit = 0;
    double swap_space_gib = 4.0;  // host memory per GPU for preemption by swap (vLLM's default)
    // The prefix cache's host tier, in GiB of KV per replica: blocks evicted from the GPU are
    // kept there and loaded back over the host link; absent: no host tier.
    std::optional<double> host_cache_gib;
  } memory;

  // The policies, by registry name, with the parameters each declares (see policies.h and
  // `servesim list`). RunConfig{} holds only the default names; run_config_from_json fills
  // in every parameter of the chosen policies and refuses the keys they do not read.
  PolicyChoice scheduler{"vllm_v1", {}};  // the default engine's (see engines/vllm.json)
  PolicyChoice allocator{"paged", {}};
  PolicyChoice cost_model{"roofline", {}};

  nlohmann::json workload;  // a workload spec object (presets already expanded)

  struct Slo {
    std::optional<double> ttft_s;
    std::optional<double> tpot_s;
    std::optional<double> e2e_s;
  } slo;

  struct Output {
    bool request_records = true;
    bool iteration_records = true;
  } output;

  struct Engine {
    // The engine profile (engines/<name>.json or a path) the configuration was assembled
    // with: assembly writes its scheduling defaults into the policy sections and its costs
    // here (see assemble_config), so a resolved configuration holds every value.
    std::string name = "vllm";
    // Host costs, CUDA graphs and kernel factors, as the cost model applies them; a document
    // without them gets the bare roofline's (none).
    EngineCosts costs;
    // Advance runs of decode iterations in bulk (same results, faster); see Replica.
    bool bulk_decode = true;
    // vLLM's enable_prefix_caching: automatic prefix caching in the paged allocator (the
    // contiguous one shares nothing). Requests hit only when the workload says what their
    // tokens are (IWorkloadSource::last_content).
    bool enable_prefix_caching = false;
    // The checks the engine makes at start-up (sim/engine/startup_checks.h); a document
    // without them gets none.
    StartupChecks startup;
  } engine;

  // Speculative decoding (docs/speculative.md): vLLM's speculative_config plus the
  // acceptance rate; absent: none. Written to resolved_config.json only when present.
  std::optional<SpeculativeConfig> speculative;
  // Prefill and decode on pools of their own (docs/disaggregation.md); absent: one pool.
  std::optional<DisaggregationConfig> disaggregation;
};

// The registries the policy sections choose from (sim/app's policy_menus() gives the
// built-ins).
struct PolicyMenus {
  std::shared_ptr<const PolicyMenu> scheduler;
  std::shared_ptr<const PolicyMenu> allocator;
  std::shared_ptr<const PolicyMenu> cost_model;
};

RunConfig run_config_from_json(const nlohmann::json& document, const std::string& source_name,
                               const PolicyMenus& menus);
nlohmann::json run_config_to_json(const RunConfig& config);

}  // namespace servesim
