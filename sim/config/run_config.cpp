#include "sim/config/run_config.h"

#include "sim/config/policy_section.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/engine/engine_profile.h"

namespace servesim {
namespace {

std::int64_t positive_or(JsonObjectReader& r, std::string_view key, std::int64_t fallback) {
  return r.optional_positive_integer(key).value_or(fallback);
}

nlohmann::json engine_section_to_json(const RunConfig::Engine& engine) {
  nlohmann::json j = engine_costs_to_json(engine.costs);
  j["name"] = engine.name;
  j["bulk_decode"] = engine.bulk_decode;
  j["enable_prefix_caching"] = engine.enable_prefix_caching;
  j["startup"] = startup_checks_to_json(engine.startup);
  return j;
}

}  // namespace

RunConfig run_config_from_json(const nlohmann::json& document, const std::string& source_name,
                               const PolicyMenus& menus) {
  JsonObjectReader r(document, source_name);
  RunConfig c;
  c.model = r.optional_string("model").value_or(c.model);
  c.hardware = r.optional_string("hardware").value_or(c.hardware);
  c.tp = positive_or(r, "tp", c.tp);
  c.pp = positive_or(r, "pp", c.pp);
  c.expert_parallel = r.optional_boolean("expert_parallel").value_or(false);
  if (const auto f = r.optional_number("expert_load_imbalance")) {
    if (!(*f >= 1.0)) r.fail("expert_load_imbalance", "expected a number of at least 1");
    c.expert_load_imbalance = *f;
  }
  c.data_parallel = positive_or(r, "data_parallel", c.data_parallel);
  c.replicas = positive_or(r, "replicas", c.replicas);
  c.router = r.optional_string("router").value_or(c.router);
  c.weight_dtype = r.optional_string("weight_dtype").value_or(c.weight_dtype);
  c.kv_dtype = r.optional_string("kv_dtype").value_or(c.kv_dtype);
  if (const auto seed = r.optional_nonnegative_integer("seed")) {
    c.seed = static_cast<std::uint64_t>(*seed);
  }
  c.max_len = r.optional_positive_integer("max_len");
  c.max_len_policy = r.optional_string("max_len_policy").value_or(c.max_len_policy);
  if (c.max_len_policy != "cut" && c.max_len_policy != "reject") {
    r.fail("max_len_policy", "expected \"cut\" or \"reject\", got \"" + c.max_len_policy + "\"");
  }

  if (auto m = r.optional_object("memory")) {
    c.memory.mem_util = m->optional_fraction("mem_util").value_or(c.memory.mem_util);
    c.memory.kv_capacity_tokens = m->optional_positive_integer("kv_capacity_tokens");
    c.memory.kv_capacity_gib = m->optional_positive_number("kv_capacity_gib");
    if (c.memory.kv_capacity_tokens && c.memory.kv_capacity_gib) {
      m->fail("kv_capacity_gib", "give kv_capacity_tokens or kv_capacity_gib, not both");
    }
    c.memory.max_batched_tokens_reserve =
        positive_or(*m, "max_batched_tokens_reserve", c.memory.max_batched_tokens_reserve);
    c.memory.swap_space_gib = m->optional_positive_number("swap_space_gib").value_or(4.0);
    c.memory.accounting = m->optional_string("accounting").value_or(c.memory.accounting);
    if (c.memory.accounting != "reserve" && c.memory.accounting != "profile_run") {
      m->fail("accounting",
              "expected \"reserve\" or \"profile_run\", got \"" + c.memory.accounting + "\"");
    }
    c.memory.non_torch_bytes =
        m->optional_nonnegative_number("non_torch_bytes").value_or(c.memory.non_torch_bytes);
    c.memory.sampler_bytes_per_logit = m->optional_nonnegative_number("sampler_bytes_per_logit")
                                           .value_or(c.memory.sampler_bytes_per_logit);
    // Sizes become token counts; beyond 1e9 GiB (an exabyte) they would overflow them.
    if (c.memory.kv_capacity_gib && *c.memory.kv_capacity_gib > 1e9) {
      m->fail("kv_capacity_gib", "expected at most 1e9 GiB");
    }
    if (c.memory.swap_space_gib > 1e9) m->fail("swap_space_gib", "expected at most 1e9 GiB");
    // Given at all, the host tier is on: a size of 0 is refused as any non-positive one.
    c.memory.host_cache_gib = m->optional_positive_number("host_cache_gib");
    if (c.memory.host_cache_gib && *c.memory.host_cache_gib > 1e9) {
      m->fail("host_cache_gib", "expected at most 1e9 GiB");
    }
    m->reject_unknown_keys();
  }
  // A missing section is the default policy with its defaults.
  const nlohmann::json no_section = nlohmann::json::object();
  const auto policy = [&](const char* key, const PolicyMenu& menu, const PolicyChoice& fallback) {
    auto section = r.optional_object(key);
    JsonObjectReader empty(no_section, r.source_name(), r.key_path(key));
    return read_policy_section(section ? *section : empty, menu, fallback.name);
  };
  c.scheduler = policy("scheduler", *menus.scheduler, c.scheduler);
  c.allocator = policy("allocator", *menus.allocator, c.allocator);
  c.cost_model = policy("cost_model", *menus.cost_model, c.cost_model);
  if (const nlohmann::json* workload = r.optional_raw("workload")) {
    if (!workload->is_object()) {
      r.fail("workload", "expected a workload object or a preset name");
    }
    c.workload = *workload;
  } else {
    r.fail("workload", "required but missing");
  }
  if (auto s = r.optional_object("slo")) {
    c.slo.ttft_s = s->optional_positive_number("ttft_s");
    c.slo.tpot_s = s->optional_positive_number("tpot_s");
    c.slo.e2e_s = s->optional_positive_number("e2e_s");
    s->reject_unknown_keys();
  }
  if (auto o = r.optional_object("output")) {
    c.output.request_records = o->optional_boolean("request_records").value_or(true);
    c.output.iteration_records = o->optional_boolean("iteration_records").value_or(true);
    o->reject_unknown_keys();
  }
  if (auto e = r.optional_object("engine")) {
    c.engine.name = e->optional_string("name").value_or(c.engine.name);
    c.engine.bulk_decode = e->optional_boolean("bulk_decode").value_or(true);
    c.engine.enable_prefix_caching = e->optional_boolean("enable_prefix_caching").value_or(false);
    read_engine_costs(document.at("engine"), source_name, "engine", c.engine.costs);
    for (const char* section : {"host", "kernels", "cuda_graphs"})
      e->ignore(section);
    if (const nlohmann::json* startup = e->optional_raw("startup")) {
      c.engine.startup = read_startup_checks(*startup, source_name, "engine.startup");
    }
    e->reject_unknown_keys();
  }
  if (auto s = r.optional_object("speculative")) c.speculative = read_speculative_config(*s);
  if (auto d = r.optional_object("disaggregation"))
    c.disaggregation = read_disaggregation_config(*d);
  // The top-level count would be ignored: each pool has its own.
  if (c.disaggregation && c.replicas != 1) {
    r.fail("replicas",
           "not read with disaggregation: give each pool its count (disaggregation.prefill."
           "replicas and disaggregation.decode.replicas)");
  }
  if (auto g = r.optional_object("routing")) {
    if (c.router != "prefix_aware") {
      r.fail("routing", "read only by router prefix_aware (the router is \"" + c.router + "\")");
    }
    for (auto [key, weight] : {std::pair{"prefix_weight", &c.routing.prefix_weight},
                               std::pair{"load_weight", &c.routing.load_weight}}) {
      if (const auto value = g->optional_number(key)) {
        if (!(*value >= 0 && *value <= 1e6)) g->fail(key, "expected a weight in [0, 1e6]");
        *weight = *value;
      }
    }
    g->reject_unknown_keys();
  }
  r.reject_unknown_keys();
  return c;
}

nlohmann::json run_config_to_json(const RunConfig& c) {
  const auto optional = [](const auto& value) -> nlohmann::json {
    if (value) return *value;
    return nullptr;
  };
  nlohmann::json j = {
      {"model", c.model},
      {"hardware", c.hardware},
      {"tp", c.tp},
      {"pp", c.pp},
      {"expert_parallel", c.expert_parallel},
      {"expert_load_imbalance", c.expert_load_imbalance},
      {"data_parallel", c.data_parallel},
      {"replicas", c.replicas},
      {"router", c.router},
      {"weight_dtype", c.weight_dtype},
      {"kv_dtype", c.kv_dtype},
      {"seed", c.seed},
      {"max_len", optional(c.max_len)},
      {"max_len_policy", c.max_len_policy},
      {"memory",
       {{"mem_util", c.memory.mem_util},
        {"kv_capacity_tokens", optional(c.memory.kv_capacity_tokens)},
        {"kv_capacity_gib", optional(c.memory.kv_capacity_gib)},
        {"max_batched_tokens_reserve", c.memory.max_batched_tokens_reserve},
        {"swap_space_gib", c.memory.swap_space_gib},
        {"accounting", c.memory.accounting},
        {"non_torch_bytes", c.memory.non_torch_bytes},
        {"sampler_bytes_per_logit", c.memory.sampler_bytes_per_logit},
        {"host_cache_gib", optional(c.memory.host_cache_gib)}}},
      {"scheduler", policy_section_to_json(c.scheduler)},
      {"allocator", policy_section_to_json(c.allocator)},
      {"cost_model", policy_section_to_json(c.cost_model)},
      {"workload", c.workload},
      {"slo",
       {{"ttft_s", optional(c.slo.ttft_s)},
        {"tpot_s", optional(c.slo.tpot_s)},
        {"e2e_s", optional(c.slo.e2e_s)}}},
      {"output",
       {{"request_records", c.output.request_records},
        {"iteration_records", c.output.iteration_records}}},
      {"engine", engine_section_to_json(c.engine)},
  };
  if (c.speculative) j["speculative"] = speculative_config_to_json(*c.speculative);
  if (c.disaggregation) j["disaggregation"] = disaggregation_config_to_json(*c.disaggregation);
  if (c.router == "prefix_aware") {
    j["routing"] = {{"prefix_weight", c.routing.prefix_weight},
                    {"load_weight", c.routing.load_weight}};
  }
  return j;
}

}  // namespace servesim
