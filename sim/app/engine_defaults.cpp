#include "sim/app/engine_defaults.h"

#include <algorithm>

#include "sim/app/policies.h"
#include "sim/config/catalog.h"
#include "sim/config/overrides.h"
#include "sim/config/policy_section.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/hardware/hardware_profile.h"

namespace servesim {
namespace {

nlohmann::json& section(nlohmann::json& document, const char* key) {
  if (!document.contains(key) || !document[key].is_object()) {
    document[key] = nlohmann::json::object();
  }
  return document[key];
}

bool needs_gpu(const EngineProfile& engine) {
  return std::any_of(engine.scheduling.scheduler_defaults.begin(),
                     engine.scheduling.scheduler_defaults.end(), [](const auto& rule) {
                       return rule.min_memory_gib.has_value() || !rule.except_gpus.empty();
                     });
}

// The rule's parameters for the run's GPU (the profile is read only when a rule asks).
nlohmann::json scheduler_parameters(const nlohmann::json& document, const EngineProfile& engine,
                                    const std::filesystem::path& data_root) {
  if (!needs_gpu(engine)) return engine.scheduler_parameters_for("", 0);
  const std::string hardware = document.value("hardware", RunConfig{}.hardware);
  const HardwareProfile profile = load_hardware_file(
      Catalog(data_root / "hw_profiles", "hardware profile", "hardware").resolve(hardware));
  return engine.scheduler_parameters_for(profile.name, profile.memory_capacity_bytes);
}

// The keys a policy section reads, or an empty set when it names no known policy (which
// run_config_from_json then refuses by name).
std::set<std::string> keys_read(const nlohmann::json& policy, const PolicyMenu& menu,
                                const std::string& default_name) {
  return policy_section_keys(policy, menu, default_name).value_or(std::set<std::string>{});
}

void fill_scheduler(nlohmann::json& document, const EngineProfile& engine,
                    const std::filesystem::path& data_root, const PolicyMenus& menus) {
  nlohmann::json& scheduler = section(document, "scheduler");
  if (!scheduler.contains("name")) scheduler["name"] = engine.scheduling.scheduler;
  if (scheduler["name"] != engine.scheduling.scheduler) return;
  const std::set<std::string> keys =
      keys_read(scheduler, *menus.scheduler, engine.scheduling.scheduler);
  const nlohmann::json parameters = scheduler_parameters(document, engine, data_root);
  for (const auto& [key, value] : parameters.items()) {
    if (keys.count(key) == 0) {
      throw InputError(engine.source, "field \"scheduling.scheduler_defaults\": scheduler \"" +
                                          engine.scheduling.scheduler + "\" has no parameter \"" +
                                          key + "\"");
    }
    if (!scheduler.contains(key)) scheduler[key] = value;
  }
  if (keys.count("preemption") != 0 && !scheduler.contains("preemption")) {
    scheduler["preemption"] = engine.scheduling.preemption_mode;
  }
}

void fill_allocator(nlohmann::json& document, const EngineProfile& engine,
                    const PolicyMenus& menus) {
  nlohmann::json& allocator = section(document, "allocator");
  const std::string fallback = RunConfig{}.allocator.name;
  if (keys_read(allocator, *menus.allocator, fallback).count("block_size") != 0 &&
      !allocator.contains("block_size")) {
    allocator["block_size"] = engine.scheduling.block_size;
  }
}

// vLLM V1 captures graphs up to a multiple of max_num_seqs: the sizes above it go.
void cut_graph_sizes(nlohmann::json& document) {
  nlohmann::json& graphs = document["engine"]["cuda_graphs"];
  const nlohmann::json& factor = graphs["max_size_per_max_num_seqs"];
  const nlohmann::json& scheduler = document["scheduler"];
  if (!factor.is_number() || !scheduler.contains("max_num_seqs") ||
      !scheduler["max_num_seqs"].is_number() || !graphs["capture_sizes"].is_array()) {
    return;
  }
  const double limit = factor.get<double>() * scheduler["max_num_seqs"].get<double>();
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& size : graphs["capture_sizes"]) {
    if (size.is_number() && size.get<double>() <= limit) kept.push_back(size);
  }
  graphs["capture_sizes"] = kept;
}

}  // namespace

EngineProfile engine_of_document(const nlohmann::json& document,
                                 const std::filesystem::path& data_root) {
  std::string name = RunConfig{}.engine.name;
  const auto it = document.find("engine");
  if (it != document.end() && it->is_object() && it->contains("name")) {
    if (!(*it)["name"].is_string()) {
      throw InputError("configuration", "field \"engine.name\": expected an engine name or path");
    }
    name = (*it)["name"].get<std::string>();
  }
  return load_engine_file(Catalog(data_root / "engines", "engine", "engine").resolve(name));
}

std::optional<std::string> platform_warning(const nlohmann::json& document,
                                            const std::filesystem::path& data_root) {
  const EngineProfile engine = engine_of_document(document, data_root);
  const std::string hardware_name = document.value("hardware", RunConfig{}.hardware);
  const HardwareProfile hardware = load_hardware_file(
      Catalog(data_root / "hw_profiles", "hardware profile", "hardware").resolve(hardware_name));
  if (hardware.platform == engine.platform) return std::nullopt;
  const auto shown = [](const std::string& platform) {
    return platform == "rocm" ? std::string("ROCm") : std::string("CUDA");
  };
  return "hardware " + hardware_name + " runs " + shown(hardware.platform) + " but engine " +
         engine.name + " describes its " + shown(engine.platform) +
         " build (graphs, attention kernels, collectives and host costs measured there); "
         "treat the result as a first estimate";
}

void remove_engine_decided_defaults(nlohmann::json& document) {
  for (const char* key : {"mem_util", "accounting", "non_torch_bytes", "sampler_bytes_per_logit"})
    document["memory"].erase(key);
  for (const char* key : {"enable_prefix_caching", "host", "kernels", "cuda_graphs", "startup"})
    document["engine"].erase(key);
  document["scheduler"].erase("name");
}

void apply_engine_defaults(nlohmann::json& document, const EngineProfile& engine,
                           const std::filesystem::path& data_root) {
  const PolicyMenus menus = policy_menus();
  fill_scheduler(document, engine, data_root, menus);
  fill_allocator(document, engine, menus);
  nlohmann::json& memory = section(document, "memory");
  if (!memory.contains("mem_util")) memory["mem_util"] = engine.scheduling.gpu_memory_utilization;
  // Each of the engine's memory accounting terms that nobody gave.
  for (const auto& [key, value] :
       {std::pair{"accounting", nlohmann::json(engine.scheduling.memory_accounting)},
        std::pair{"non_torch_bytes", nlohmann::json(engine.scheduling.non_torch_bytes)},
        std::pair{"sampler_bytes_per_logit",
                  nlohmann::json(engine.scheduling.sampler_bytes_per_logit)}}) {
    if (!memory.contains(key)) memory[key] = value;
  }
  nlohmann::json& given = section(document, "engine");
  nlohmann::json resolved = engine_costs_to_json(engine.costs);
  for (const char* key : {"host", "kernels", "cuda_graphs"}) {
    if (given.contains(key)) {
      if (!given[key].is_object()) {
        throw InputError("configuration",
                         std::string("field \"engine.") + key + "\": expected a JSON object");
      }
      deep_merge(resolved[key], given[key]);
    }
    given[key] = resolved[key];
  }
  // The engine's start-up checks, under any the document changes.
  nlohmann::json startup = startup_checks_to_json(engine.startup);
  if (given.contains("startup")) {
    if (!given["startup"].is_object()) {
      throw InputError("configuration", "field \"engine.startup\": expected a JSON object");
    }
    deep_merge(startup, given["startup"]);
  }
  given["startup"] = startup;
  if (!given.contains("enable_prefix_caching")) {
    given["enable_prefix_caching"] = engine.scheduling.enable_prefix_caching;
  }
  // A disaggregated deployment hands KV off as its engine does, unless it says otherwise.
  if (const auto it = document.find("disaggregation"); it != document.end() && it->is_object()) {
    nlohmann::json& transfer = (*it)["kv_transfer"];
    if (transfer.is_null()) transfer = nlohmann::json::object();
    if (transfer.is_object() && !transfer.contains("handoff")) {
      transfer["handoff"] = engine.kv_handoff;
    }
  }
  cut_graph_sizes(document);
}

}  // namespace servesim
