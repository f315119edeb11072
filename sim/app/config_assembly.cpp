#include "sim/app/config_assembly.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/app/engine_defaults.h"
#include "sim/app/policies.h"
#include "sim/config/catalog.h"
#include "sim/config/overrides.h"
#include "sim/config/policy_section.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/workload/trace_reader.h"

namespace servesim {
namespace {

// Makes a relative file path inside a preset absolute, so the resolved config stays valid
// wherever it is read.
void absolutize(nlohmann::json& preset, const char* section, const std::filesystem::path& base) {
  if (!preset.is_object() || !preset.contains(section) || !preset[section].is_object() ||
      !preset[section].contains("path") || !preset[section]["path"].is_string()) {
    return;
  }
  auto& path = preset[section]["path"];
  const std::filesystem::path file = path.get<std::string>();
  if (file.is_relative()) path = (base / file).string();
}

// A workload given as a preset name becomes the preset's JSON, and a trace file (Azure, plain
// or Mooncake, told by its content) a spec replaying it; an object with a "preset" key becomes
// that preset with the object's other keys merged over it.
void expand_workload(nlohmann::json& document, const std::filesystem::path& data_root) {
  if (!document.contains("workload")) return;
  nlohmann::json& workload = document["workload"];
  nlohmann::json patch = nlohmann::json::object();
  std::string name;
  if (workload.is_string()) {
    name = workload.get<std::string>();
  } else if (workload.is_object() && workload.contains("preset") &&
             workload["preset"].is_string()) {
    name = workload["preset"].get<std::string>();
    patch = workload;
    patch.erase("preset");
  } else {
    return;
  }
  const Catalog catalog(data_root / "workloads", "workload preset", "workload");
  const auto path = catalog.resolve(name);
  nlohmann::json preset;
  if (workload_file_kind(path) == WorkloadFileKind::Trace) {
    // A trace file on its own replays as it stands: its arrivals and its lengths.
    preset = {{"description", "trace " + path.filename().string()},
              {"arrival", {{"process", "trace"}}},
              {"lengths", {{"distribution", "trace"}}},
              {"trace", {{"path", std::filesystem::absolute(path).string()}}}};
  } else {
    preset = read_json_file(path);
    absolutize(preset, "trace", path.parent_path());
    absolutize(preset, "lengths", path.parent_path());
  }
  deep_merge(preset, patch);
  workload = std::move(preset);
}

// `--arrival` switches the process: keys that belonged to the old one (a preset's gamma cv,
// say) would make the new one invalid, so only the new process's keys are kept.
void keep_arrival_keys_of_process(nlohmann::json& document) {
  auto& arrival = document["workload"]["arrival"];
  // A process that is not a string is left for the workload parser to refuse by name.
  if (!arrival.is_object() || !arrival.contains("process") || !arrival["process"].is_string()) {
    return;
  }
  const auto process = arrival["process"].get<std::string>();
  // max_concurrency, a client-side limit, belongs to every open-loop process.
  std::vector<std::string> keep{"process", "max_concurrency"};
  if (process == "poisson" || process == "constant") {
    keep = {"process", "rate_per_s", "stages", "max_concurrency"};
  }
  if (process == "gamma") keep = {"process", "rate_per_s", "cv", "max_concurrency"};
  if (process == "closed_loop") keep = {"process", "users", "think_time_s"};
  nlohmann::json kept = nlohmann::json::object();
  for (const auto& key : keep) {
    if (arrival.contains(key)) kept[key] = arrival[key];
  }
  arrival = std::move(kept);
}

// The key path an override sets: "allocator.block_size" of "allocator.block_size=32".
std::string override_path(const ConfigOverride& o) {
  return o.assignment.substr(0, o.assignment.find('='));
}

// An override that switches a policy (`--allocator contiguous` over a config file's paged
// allocator, a sweep's policy axis) leaves the keys the old policy read and the new one does
// not: they came with the old choice, so they go with it, as keep_arrival_keys_of_process
// does for arrival processes. Keys an override set stay whatever the policy, so a key given
// for the wrong policy is still refused by name.
void drop_keys_of_replaced_policy(nlohmann::json& document, const nlohmann::json& before,
                                  const std::string& section, const PolicyMenu& menu,
                                  const std::string& default_name,
                                  const std::set<std::string>& overridden) {
  if (overridden.count(section) != 0 || !document.contains(section) || !before.contains(section)) {
    return;
  }
  const auto old_keys = policy_section_keys(before[section], menu, default_name);
  const auto new_keys = policy_section_keys(document[section], menu, default_name);
  if (!old_keys || !new_keys || *old_keys == *new_keys) return;
  for (const auto& key : *old_keys) {
    if (new_keys->count(key) == 0 && overridden.count(section + "." + key) == 0) {
      document[section].erase(key);
    }
  }
}

// The key of a scheduler's chunked-prefill budget (SchedulerFactory), or nullptr when it
// runs whole prompts or is unknown.
const std::string* chunked_prefill_budget_key(const Registry<SchedulerFactory>& schedulers,
                                              std::string_view name) {
  for (const auto& entry : schedulers.entries()) {
    if (entry.name == name) {
      const std::string& key = entry.factory.chunked_prefill_budget_key;
      return key.empty() ? nullptr : &key;
    }
  }
  return nullptr;
}

std::string scheduler_name(const nlohmann::json& document, const std::string& default_name) {
  const auto it = document.find("scheduler");
  if (it != document.end() && it->is_object() && it->contains("name") &&
      (*it)["name"].is_string()) {
    return (*it)["name"].get<std::string>();
  }
  return default_name;
}

// vLLM's --enable-chunked-prefill and --no-enable-chunked-prefill name no scheduler of their
// own: they hold of the scheduler the configuration ends with.
void check_chunked_prefill(bool wanted, const std::string& scheduler,
                           const Registry<SchedulerFactory>& schedulers) {
  if ((chunked_prefill_budget_key(schedulers, scheduler) != nullptr) == wanted) return;
  std::string alternatives;
  for (const auto& entry : schedulers.entries()) {
    if (entry.factory.chunked_prefill_budget_key.empty() != wanted) {
      alternatives += (alternatives.empty() ? "" : ", ") + entry.name;
    }
  }
  throw InputError(wanted ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill",
                   "scheduler \"" + scheduler + "\" " +
                       (wanted ? "runs whole prompts" : "chunks prompts") +
                       "; the schedulers that " + (wanted ? "chunk" : "do not chunk") +
                       " prompts are " + alternatives);
}

}  // namespace

nlohmann::json assemble_config(const ConfigSources& sources,
                               const std::filesystem::path& data_root) {
  nlohmann::json document = run_config_to_json(RunConfig{});
  remove_engine_decided_defaults(document);
  document["workload"] = "sharegpt";
  bool workload_given = false;
  bool allocator_named = false;  // else it is the final scheduler's default allocator
  if (sources.config_file || sources.config_document) {
    const nlohmann::json file =
        sources.config_document ? *sources.config_document : read_json_file(*sources.config_file);
    if (!file.is_object()) {
      throw InputError(sources.config_document ? "config" : sources.config_file->string(),
                       "expected a JSON object");
    }
    workload_given = file.contains("workload");
    allocator_named = file.contains("allocator") && file["allocator"].is_object() &&
                      file["allocator"].contains("name");
    deep_merge(document, file);
  }
  // Whole-workload overrides first (a preset name), then expand, then everything else.
  for (const auto& o : sources.overrides) {
    if (o.assignment.rfind("workload=", 0) == 0) {
      apply_override(document, o.assignment, o.origin);
      workload_given = true;
    }
  }
  expand_workload(document, data_root);
  if (!workload_given) {
    document["workload"]["arrival"] = {{"process", "poisson"}, {"rate_per_s", 8.0}};
    document["workload"]["num_requests"] = 2000;
  }
  nlohmann::json before_overrides = document;
  std::set<std::string> overridden;
  std::vector<ConfigOverride> token_limits;  // applied once the scheduler is known
  for (const auto& o : sources.overrides) {
    if (o.assignment.rfind("workload=", 0) == 0) continue;
    if (override_path(o) == kSchedulerTokenLimitKey) {
      token_limits.push_back(o);
      continue;
    }
    apply_override(document, o.assignment, o.origin);
    overridden.insert(override_path(o));
    if (override_path(o) == "allocator" || override_path(o) == "allocator.name") {
      allocator_named = true;
    }
    if (o.assignment.rfind("workload.arrival.process=", 0) == 0) {
      keep_arrival_keys_of_process(document);
    }
  }
  const RunConfig defaults;
  const EngineProfile engine = engine_of_document(document, data_root);
  const auto schedulers = scheduler_registry();
  // An engine's chunked_prefill says what its scheduler does: the two must agree.
  if ((chunked_prefill_budget_key(schedulers, engine.scheduling.scheduler) != nullptr) !=
      engine.scheduling.chunked_prefill) {
    throw InputError(
        engine.source,
        "field \"scheduling.chunked_prefill\": scheduler \"" + engine.scheduling.scheduler + "\" " +
            (engine.scheduling.chunked_prefill ? "runs whole prompts" : "chunks prompts"));
  }
  // --enable-chunked-prefill alone keeps an engine scheduler that chunks, else takes sarathi.
  if (sources.chunked_prefill == true && !document["scheduler"].contains("name") &&
      chunked_prefill_budget_key(schedulers, engine.scheduling.scheduler) == nullptr) {
    document["scheduler"]["name"] = "sarathi";
  }
  const std::string scheduler = scheduler_name(document, engine.scheduling.scheduler);
  if (!allocator_named && document["allocator"].is_object()) {
    // Before and after the overrides alike, so that the choice drops none of the file's keys.
    document["allocator"]["name"] = before_overrides["allocator"]["name"] =
        default_allocator(scheduler);
  }
  const std::string* budget_key = chunked_prefill_budget_key(schedulers, scheduler);
  for (const auto& o : token_limits) {
    const std::string path =
        "scheduler." + (budget_key != nullptr ? *budget_key : "max_num_batched_tokens");
    apply_override(document, path + o.assignment.substr(o.assignment.find('=')), o.origin);
    overridden.insert(path);
  }
  const PolicyMenus menus = policy_menus();
  if (sources.chunked_prefill) {
    check_chunked_prefill(*sources.chunked_prefill, scheduler, schedulers);
  }
  drop_keys_of_replaced_policy(document, before_overrides, "scheduler", *menus.scheduler,
                               engine.scheduling.scheduler, overridden);
  drop_keys_of_replaced_policy(document, before_overrides, "allocator", *menus.allocator,
                               defaults.allocator.name, overridden);
  drop_keys_of_replaced_policy(document, before_overrides, "cost_model", *menus.cost_model,
                               defaults.cost_model.name, overridden);
  apply_engine_defaults(document, engine, data_root);
  return document;
}

}  // namespace servesim
