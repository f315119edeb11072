#include "sim/app/kv_report.h"

#include <cmath>
#include <string>

#include "sim/app/policies.h"
#include "sim/app/replica_memory.h"
#include "sim/app/startup_check.h"
#include "sim/config/catalog.h"
#include "sim/config/model_catalog.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/model/model_loader.h"
#include "sim/model/model_size.h"

namespace servesim {
namespace {

// A whole number as a JSON integer, anything else as a double.
nlohmann::json json_number(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

nlohmann::json groups_json(const std::vector<KvGroup>& groups, std::optional<std::int64_t> tokens) {
  nlohmann::json list = nlohmann::json::array();
  for (const KvGroup& g : groups) {
    nlohmann::json j;
    j["kind"] = std::string(kv_group_kind_name(g.kind));
    j["layers"] = g.layers;
    if (g.kind == KvGroupKind::RecurrentState) {
      j["state_bytes_per_sequence"] = json_number(g.state_bytes_per_sequence);
    } else {
      j["bytes_per_token"] = json_number(g.bytes_per_token);
    }
    if (g.window_tokens > 0) j["window_tokens"] = g.window_tokens;
    if (tokens) j["kv_bytes"] = json_number(g.bytes(*tokens));
    list.push_back(std::move(j));
  }
  return list;
}

// The pool of blocks and its groups, as vLLM cuts a hybrid model's KV memory.
nlohmann::json pools_json(const KvPoolLayout& pools, std::int64_t blocks) {
  nlohmann::json j;
  j["blocks"] = blocks;
  j["block_tokens"] = pools.block_tokens;
  j["layers_per_group"] = pools.layers_per_group;
  j["page_bytes"] = json_number(pools.page_bytes);
  j["block_bytes"] = json_number(pools.block_bytes());
  nlohmann::json list = nlohmann::json::array();
  for (const KvPoolGroup& g : pools.groups) {
    nlohmann::json group;
    group["kind"] = std::string(kv_group_kind_name(g.kind));
    group["layers"] = g.layers;
    if (g.block_tokens > 0) group["block_tokens"] = g.block_tokens;
    if (g.window_tokens > 0) group["window_tokens"] = g.window_tokens;
    list.push_back(std::move(group));
  }
  j["groups"] = std::move(list);
  return j;
}

}  // namespace

nlohmann::json kv_report(const ModelSpec& model, const HardwareProfile* hardware,
                         const KvReportOptions& options) {
  const KvCapacityOptions& o = options.capacity;
  const ParameterCounts params = count_parameters(model);
  const std::vector<KvGroup> groups = kv_groups(model, o.kv_dtype);

  nlohmann::json r;
  r["model"] = model.name;
  r["family"] = std::string(family_name(model.family));
  r["parameters_total"] = params.total;
  r["parameters_active"] = params.active;
  r["parameters_embedding"] = params.embedding;
  if (params.mtp > 0) r["parameters_mtp"] = params.mtp;
  if (model.quantization) r["quantization"] = model.quantization->description();
  r["kv_dtype"] = std::string(dtype_name(o.kv_dtype));
  r["kv_bytes_per_token"] = json_number(kv_slot_bytes_per_token(groups));
  r["kv_reserved_bytes_per_sequence"] = json_number(kv_reserved_bytes_per_sequence(groups));
  r["kv_groups"] = groups_json(groups, options.tokens);
  if (options.tokens) {
    r["tokens"] = *options.tokens;
    r["kv_bytes"] = json_number(kv_bytes_for_tokens(groups, *options.tokens));
  }
  if (hardware != nullptr) {
    const KvCapacity c = plan_kv_capacity(model, *hardware, o);
    const std::int64_t max_len = options.max_len.value_or(model.max_position_embeddings);
    r["hw"] = hardware->name;
    r["tp"] = o.parallelism.tensor;
    r["pp"] = o.parallelism.pipeline;
    if (o.parallelism.data > 1) r["data_parallel"] = o.parallelism.data;
    r["weight_dtype"] = std::string(dtype_name(o.weight_dtype));
    r["mem_util"] = o.memory_utilization;
    r["memory_capacity_bytes_per_gpu"] = json_number(c.memory_capacity_bytes_per_gpu);
    r["usable_bytes_per_gpu"] = json_number(std::floor(c.usable_bytes_per_gpu));
    r["weight_bytes_per_gpu"] = json_number(c.weight_bytes_per_gpu);
    r["activation_reserve_bytes_per_gpu"] =
        json_number(std::ceil(c.activation_reserve_bytes_per_gpu));
    r["kv_bytes_per_gpu"] = json_number(std::floor(c.kv_bytes_per_gpu));
    r["kv_capacity_bytes"] = json_number(std::floor(c.kv_capacity_bytes));
    r["kv_bytes_per_token_per_gpu"] = json_number(c.kv_bytes_per_token_per_gpu);
    r["kv_groups_per_gpu"] = groups_json(c.groups_per_gpu, std::nullopt);
    if (c.pools.per_group()) r["kv_pools"] = pools_json(c.pools, c.pool_blocks);
    r["kv_capacity_tokens"] = c.kv_capacity_tokens;
    // What vLLM logs as `GPU KV cache size: N tokens` (whole blocks of the pool).
    r["vllm_kv_cache_size_tokens"] = c.pools.reported_tokens(c.pools.blocks_in(c.kv_bytes_per_gpu));
    r["max_len"] = max_len;
    r["max_sequences_at_max_len"] = sequences_at_length(c, o, max_len);
  }
  return r;
}

nlohmann::json kv_report_for_run(const nlohmann::json& config_document,
                                 const std::filesystem::path& data_root,
                                 const KvRunReportOptions& options) {
  const RunConfig config = run_config_from_json(config_document, "configuration", policy_menus());
  const ModelSpec model =
      options.model ? *options.model : load_catalog_model(data_root, config.model, "model");
  KvReportOptions report;
  report.tokens = options.tokens;
  report.capacity = kv_capacity_options(config, model);
  if (!options.with_hardware) {
    nlohmann::json r = kv_report(model, nullptr, report);
    r["engine"] = config.engine.name;
    return r;
  }
  report.max_len = max_len_of(config, model);
  const HardwareProfile hardware = load_hardware_file(
      Catalog(data_root / "hw_profiles", "hardware profile", "hardware").resolve(config.hardware));
  nlohmann::json r = kv_report(model, &hardware, report);
  r["engine"] = config.engine.name;
  const KvCapacity planned = plan_kv_capacity(model, hardware, report.capacity);
  const StartupFacts facts = startup_facts(config, model, hardware, planned);
  r["max_len_that_fits"] = largest_max_len_that_fits(facts, planned.kv_bytes_per_gpu);
  try {
    apply_startup_checks(config.engine.startup, facts);
    r["starts"] = true;
  } catch (const InfeasibleError& e) {
    r["starts"] = false;
    r["does_not_start"] = e.what();
  }
  return r;
}

}  // namespace servesim
