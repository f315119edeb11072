#include "sim/engine/engine_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "sim/core/json_reader.h"

namespace servesim {
namespace {

double non_negative(JsonObjectReader& r, std::string_view key, double fallback) {
  const auto value = r.optional_number(key);
  if (value && *value < 0) r.fail(key, "expected a non-negative number");
  return value.value_or(fallback);
}

// A host cost or latency in seconds: at most kMaxStepCostS, so it fits the nanosecond clock.
double seconds(JsonObjectReader& r, std::string_view key, double fallback) {
  return r.optional_seconds(key, kMaxStepCostS).value_or(fallback);
}

double positive_factor(JsonObjectReader& r, std::string_view key, double fallback) {
  return r.optional_positive_number(key).value_or(fallback);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

void read_host(JsonObjectReader& h, EngineHostCosts& host) {
  host.schedule_s = seconds(h, "schedule_s", host.schedule_s);
  host.step_s = seconds(h, "step_s", host.step_s);
  host.per_sequence_s = seconds(h, "per_sequence_s", host.per_sequence_s);
  host.per_token_s = seconds(h, "per_token_s", host.per_token_s);
  host.overlaps_device = h.optional_boolean("overlaps_device").value_or(host.overlaps_device);
  host.kernel_launch_s = seconds(h, "kernel_launch_s", host.kernel_launch_s);
  host.decode_steps_per_schedule = h.optional_positive_integer("decode_steps_per_schedule")
                                       .value_or(host.decode_steps_per_schedule);
  host.frontend_latency_s = seconds(h, "frontend_latency_s", host.frontend_latency_s);
  h.reject_unknown_keys();
}

void read_kernels(JsonObjectReader& k, EngineKernelFactors& kernels) {
  kernels.attention_backend =
      k.optional_string("attention_backend").value_or(kernels.attention_backend);
  kernels.gemm = positive_factor(k, "gemm_factor", kernels.gemm);
  // Absent or null: gemm_factor's.
  if (const auto memory = k.optional_positive_number("gemm_memory_factor")) {
    kernels.gemm_memory = *memory;
  }
  kernels.decode_attention =
      positive_factor(k, "decode_attention_factor", kernels.decode_attention);
  kernels.prefill_attention =
      positive_factor(k, "prefill_attention_factor", kernels.prefill_attention);
  // Absent or null: the hardware's collective latency.
  if (const auto latency = k.optional_seconds("all_reduce_latency_s", kMaxStepCostS)) {
    kernels.all_reduce_latency_s = *latency;
  }
  kernels.fused_norms = k.optional_boolean("fused_norms").value_or(kernels.fused_norms);
  kernels.decode_attention_core_efficiency =
      non_negative(k, "decode_attention_core_efficiency", kernels.decode_attention_core_efficiency);
  if (kernels.decode_attention_core_efficiency > 1) {
    k.fail("decode_attention_core_efficiency",
           "expected a share of the fp32 peak between 0 (off) and 1");
  }
  kernels.decode_attention_core_sequence_keys = non_negative(
      k, "decode_attention_core_sequence_keys", kernels.decode_attention_core_sequence_keys);
  if (const auto group = k.optional_number("decode_attention_tensor_core_min_group")) {
    if (*group < 0 || *group != std::floor(*group)) {
      k.fail("decode_attention_tensor_core_min_group",
             "expected a whole number of query heads per KV head (0: no model)");
    }
    kernels.decode_attention_tensor_core_min_group = static_cast<std::int64_t>(*group);
  }
  if (const auto tokens = k.optional_number("fp8_cuda_core_gemm_max_tokens")) {
    if (*tokens < 0 || *tokens != std::floor(*tokens)) {
      k.fail("fp8_cuda_core_gemm_max_tokens", "expected a whole number of tokens (0: none)");
    }
    kernels.fp8_cuda_core_gemm_max_tokens = static_cast<std::int64_t>(*tokens);
  }
  k.reject_unknown_keys();
}

void read_graphs(JsonObjectReader& g, EngineCosts& costs) {
  if (const nlohmann::json* sizes = g.optional_raw("capture_sizes")) {
    if (!sizes->is_array()) g.fail("capture_sizes", "expected a list of batch sizes in tokens");
    std::vector<std::int64_t> list;
    for (const auto& size : *sizes) {
      if (!size.is_number_integer() || size.get<std::int64_t>() < 1 ||
          (!list.empty() && size.get<std::int64_t>() <= list.back())) {
        g.fail("capture_sizes", "expected positive whole numbers of tokens in ascending order");
      }
      list.push_back(size.get<std::int64_t>());
    }
    costs.cuda_graph_capture_sizes = std::move(list);
  }
  costs.cuda_graphs_mixed_batches =
      g.optional_boolean("mixed_batches").value_or(costs.cuda_graphs_mixed_batches);
  if (const auto factor = g.optional_positive_number("max_size_per_max_num_seqs")) {
    costs.max_capture_size_per_max_num_seqs = *factor;
  }
  g.reject_unknown_keys();
}

void read_costs(JsonObjectReader& r, EngineCosts& costs) {
  if (auto h = r.optional_object("host")) read_host(*h, costs.host);
  if (auto k = r.optional_object("kernels")) read_kernels(*k, costs.kernels);
  if (auto g = r.optional_object("cuda_graphs")) read_graphs(*g, costs);
}

SchedulerDefaultsRule read_rule(const nlohmann::json& rule, const std::string& source_name,
                                const std::string& key_prefix) {
  JsonObjectReader r(rule, source_name, key_prefix);  // refuses a rule that is no object
  SchedulerDefaultsRule out;
  if (auto when = r.optional_object("when")) {
    out.min_memory_gib = when->optional_positive_number("min_memory_gib");
    if (const nlohmann::json* except = when->optional_raw("except_gpus")) {
      if (!except->is_array()) when->fail("except_gpus", "expected a list of profile names");
      for (const auto& name : *except) {
        if (!name.is_string()) when->fail("except_gpus", "expected a list of profile names");
        out.except_gpus.push_back(name.get<std::string>());
      }
    }
    when->reject_unknown_keys();
  }
  // Every other key is a scheduler parameter; the scheduler's registry entry checks them
  // when the run's configuration is assembled.
  for (const auto& [key, value] : rule.items()) {
    if (key == "when") continue;
    if (!value.is_number() && !value.is_string() && !value.is_boolean()) {
      r.fail(key, "expected a number, a string or a boolean");
    }
    r.ignore(key);
    out.parameters[key] = value;
  }
  return out;
}

void read_scheduling(JsonObjectReader& s, EngineScheduling& scheduling) {
  scheduling.scheduler = s.string("scheduler");
  if (const nlohmann::json* rules = s.optional_raw("scheduler_defaults")) {
    if (!rules->is_array()) s.fail("scheduler_defaults", "expected a list of rules");
    for (std::size_t i = 0; i < rules->size(); ++i) {
      scheduling.scheduler_defaults.push_back(
          read_rule((*rules)[i], s.source_name(),
                    s.key_path("scheduler_defaults") + "[" + std::to_string(i) + "]"));
    }
  }
  scheduling.chunked_prefill = s.optional_boolean("chunked_prefill").value_or(false);
  scheduling.enable_prefix_caching = s.optional_boolean("enable_prefix_caching").value_or(false);
  scheduling.block_size = s.optional_positive_integer("block_size").value_or(16);
  scheduling.gpu_memory_utilization = s.optional_fraction("gpu_memory_utilization").value_or(0.9);
  scheduling.preemption_mode = s.optional_string("preemption_mode").value_or("recompute");
  if (scheduling.preemption_mode != "recompute" && scheduling.preemption_mode != "swap") {
    s.fail("preemption_mode", "expected \"recompute\" or \"swap\"");
  }
  scheduling.memory_accounting = s.optional_string("memory_accounting").value_or("reserve");
  if (scheduling.memory_accounting != "reserve" && scheduling.memory_accounting != "profile_run") {
    s.fail("memory_accounting", "expected \"reserve\" or \"profile_run\"");
  }
  scheduling.non_torch_bytes = s.optional_nonnegative_number("non_torch_bytes").value_or(0.0);
  scheduling.sampler_bytes_per_logit =
      s.optional_nonnegative_number("sampler_bytes_per_logit").value_or(0.0);
  s.reject_unknown_keys();
}

}  // namespace

nlohmann::json EngineProfile::scheduler_parameters_for(const std::string& hardware_name,
                                                       double memory_capacity_bytes) const {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  for (const SchedulerDefaultsRule& rule : scheduling.scheduler_defaults) {
    if (rule.min_memory_gib && memory_capacity_bytes < *rule.min_memory_gib * kGiB) continue;
    const bool excepted =
        std::any_of(rule.except_gpus.begin(), rule.except_gpus.end(),
                    [&](const std::string& gpu) { return lower(gpu) == lower(hardware_name); });
    if (excepted) continue;
    return rule.parameters;
  }
  return nlohmann::json::object();
}

void read_engine_costs(const nlohmann::json& document, const std::string& source_name,
                       const std::string& key_prefix, EngineCosts& costs) {
  JsonObjectReader r(document, source_name, key_prefix);
  read_costs(r, costs);
}

EngineProfile engine_from_json(const nlohmann::json& document, const std::string& source_name) {
  JsonObjectReader r(document, source_name);
  EngineProfile e;
  e.source = source_name;
  e.name = r.string("name");
  e.description = r.optional_string("description").value_or("");
  auto scheduling = r.object("scheduling");
  read_scheduling(scheduling, e.scheduling);
  read_costs(r, e.costs);
  if (const nlohmann::json* startup = r.optional_raw("startup")) {
    e.startup = read_startup_checks(*startup, source_name, "startup");
  }
  e.kv_handoff = r.optional_string("kv_handoff").value_or(e.kv_handoff);
  if (e.kv_handoff != "pull_after_prefill" && e.kv_handoff != "reserve_before_prefill") {
    r.fail("kv_handoff", "expected \"pull_after_prefill\" or \"reserve_before_prefill\"");
  }
  e.platform = r.optional_string("platform").value_or(e.platform);
  if (e.platform != "cuda" && e.platform != "rocm") {
    r.fail("platform", "expected \"cuda\" or \"rocm\"");
  }
  if (const nlohmann::json* calibration = r.optional_raw("calibration")) {
    if (!calibration->is_object()) r.fail("calibration", "expected a JSON object");
    e.calibration = *calibration;
  }
  if (auto s = r.optional_object("sources")) {
    auto numbers = numeric_key_paths(document, "sources");
    std::erase_if(numbers, [](const std::string& key) { return key.starts_with("calibration."); });
    for (const auto& [key, value] : document.at("sources").items()) {
      if (!value.is_string()) s->fail(key, "expected a string naming where the value comes from");
      s->ignore(key);
      e.sources.emplace(key, value.get<std::string>());
    }
    // Every number needs its source; one for a section covers the numbers inside it.
    for (const std::string& key : numbers) {
      const bool covered = std::any_of(e.sources.begin(), e.sources.end(), [&](const auto& source) {
        return key == source.first || key.starts_with(source.first + ".");
      });
      if (!covered) r.fail("sources", "has no source for " + key);
    }
  } else {
    r.fail("sources", "required: where each number comes from");
  }
  r.ignore("comment");
  r.reject_unknown_keys();
  return e;
}

EngineProfile load_engine_file(const std::filesystem::path& path) {
  return engine_from_json(read_json_file(path), path.string());
}

nlohmann::json engine_costs_to_json(const EngineCosts& c) {
  const auto optional = [](const std::optional<double>& value) -> nlohmann::json {
    if (value) return *value;
    return nullptr;
  };
  return {
      {"host",
       {{"schedule_s", c.host.schedule_s},
        {"step_s", c.host.step_s},
        {"per_sequence_s", c.host.per_sequence_s},
        {"per_token_s", c.host.per_token_s},
        {"overlaps_device", c.host.overlaps_device},
        {"kernel_launch_s", c.host.kernel_launch_s},
        {"decode_steps_per_schedule", c.host.decode_steps_per_schedule},
        {"frontend_latency_s", c.host.frontend_latency_s}}},
      {"kernels",
       {{"attention_backend", c.kernels.attention_backend},
        {"gemm_factor", c.kernels.gemm},
        {"gemm_memory_factor", optional(c.kernels.gemm_memory)},
        {"decode_attention_factor", c.kernels.decode_attention},
        {"prefill_attention_factor", c.kernels.prefill_attention},
        {"all_reduce_latency_s", optional(c.kernels.all_reduce_latency_s)},
        {"fused_norms", c.kernels.fused_norms},
        {"decode_attention_core_efficiency", c.kernels.decode_attention_core_efficiency},
        {"decode_attention_core_sequence_keys", c.kernels.decode_attention_core_sequence_keys},
        {"decode_attention_tensor_core_min_group",
         c.kernels.decode_attention_tensor_core_min_group},
        {"fp8_cuda_core_gemm_max_tokens", c.kernels.fp8_cuda_core_gemm_max_tokens}}},
      {"cuda_graphs",
       {{"capture_sizes", c.cuda_graph_capture_sizes},
        {"mixed_batches", c.cuda_graphs_mixed_batches},
        {"max_size_per_max_num_seqs", optional(c.max_capture_size_per_max_num_seqs)}}},
  };
}

nlohmann::json engine_to_json(const EngineProfile& e) {
  nlohmann::json rules = nlohmann::json::array();
  for (const SchedulerDefaultsRule& rule : e.scheduling.scheduler_defaults) {
    nlohmann::json j = rule.parameters;
    nlohmann::json when = nlohmann::json::object();
    if (rule.min_memory_gib) when["min_memory_gib"] = *rule.min_memory_gib;
    if (!rule.except_gpus.empty()) when["except_gpus"] = rule.except_gpus;
    if (!when.empty()) j["when"] = when;
    rules.push_back(j);
  }
  nlohmann::json j = engine_costs_to_json(e.costs);
  j["name"] = e.name;
  j["description"] = e.description;
  j["scheduling"] = {{"scheduler", e.scheduling.scheduler},
                     {"scheduler_defaults", rules},
                     {"chunked_prefill", e.scheduling.chunked_prefill},
                     {"enable_prefix_caching", e.scheduling.enable_prefix_caching},
                     {"block_size", e.scheduling.block_size},
                     {"gpu_memory_utilization", e.scheduling.gpu_memory_utilization},
                     {"preemption_mode", e.scheduling.preemption_mode}};
  if (e.scheduling.memory_accounting != "reserve") {
    j["scheduling"]["memory_accounting"] = e.scheduling.memory_accounting;
    j["scheduling"]["non_torch_bytes"] = e.scheduling.non_torch_bytes;
    j["scheduling"]["sampler_bytes_per_logit"] = e.scheduling.sampler_bytes_per_logit;
  }
  if (e.startup != StartupChecks{}) j["startup"] = startup_checks_to_json(e.startup);
  j["kv_handoff"] = e.kv_handoff;
  if (e.platform != "cuda") j["platform"] = e.platform;
  if (!e.calibration.is_null()) j["calibration"] = e.calibration;
  j["sources"] = e.sources;
  return j;
}

}  // namespace servesim
