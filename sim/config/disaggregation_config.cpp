#include "sim/config/disaggregation_config.h"

namespace servesim {

const std::vector<std::string>& role_keys() {
  static const std::vector<std::string> keys{
      "replicas",        "hardware", "tp",        "pp",        "data_parallel",
      "expert_parallel", "router",   "scheduler", "allocator", "memory"};
  return keys;
}

namespace {

nlohmann::json read_role(JsonObjectReader& disaggregation, const char* role) {
  auto section = disaggregation.optional_object(role);
  if (!section) disaggregation.fail(role, "required: the role's pool, e.g. {\"replicas\": 1}");
  // The role's replicas, checked here; every other key is checked as the top level's is.
  (void)section->positive_integer("replicas");
  for (const std::string& key : role_keys())
    section->ignore(key);
  section->reject_unknown_keys();
  return *disaggregation.optional_raw(role);
}

}  // namespace

DisaggregationConfig read_disaggregation_config(JsonObjectReader& section) {
  DisaggregationConfig c;
  c.prefill = read_role(section, "prefill");
  c.decode = read_role(section, "decode");
  if (auto t = section.optional_object("kv_transfer")) {
    c.kv_transfer.link = t->optional_string("link").value_or(c.kv_transfer.link);
    if (c.kv_transfer.link != "auto" && c.kv_transfer.link != "nic" &&
        c.kv_transfer.link != "nvlink") {
      t->fail("link",
              "expected \"auto\", \"nic\" or \"nvlink\", got \"" + c.kv_transfer.link + "\"");
    }
    c.kv_transfer.bandwidth_bytes_per_s =
        t->optional_rate("bandwidth_bytes_per_s", kMinBandwidthBytesPerS, "B/s");
    if (const auto latency = t->optional_number("latency_s")) {
      if (!(*latency >= 0 && *latency <= 3600)) t->fail("latency_s", "expected 0 to 3600 seconds");
      c.kv_transfer.latency_s = *latency;
    }
    if (const auto overhead = t->optional_number("block_overhead_s")) {
      if (!(*overhead >= 0 && *overhead <= 1))
        t->fail("block_overhead_s", "expected 0 to 1 second");
      c.kv_transfer.block_overhead_s = *overhead;
    }
    if (const auto timeout = t->optional_number("abort_timeout_s")) {
      if (!(*timeout >= 0 && *timeout <= 1e7)) {
        t->fail("abort_timeout_s", "expected 0 (never) to 1e7 seconds");
      }
      c.kv_transfer.abort_timeout_s = *timeout;
    }
    c.kv_transfer.layerwise = t->optional_boolean("layerwise").value_or(false);
    c.kv_transfer.handoff = t->optional_string("handoff").value_or(c.kv_transfer.handoff);
    if (c.kv_transfer.handoff != "pull_after_prefill" &&
        c.kv_transfer.handoff != "reserve_before_prefill") {
      t->fail("handoff", "expected \"pull_after_prefill\" or \"reserve_before_prefill\", got \"" +
                             c.kv_transfer.handoff + "\"");
    }
    t->reject_unknown_keys();
  }
  c.local_prefill_max_tokens = section.optional_nonnegative_integer("local_prefill_max_tokens")
                                   .value_or(c.local_prefill_max_tokens);
  section.reject_unknown_keys();
  return c;
}

nlohmann::json disaggregation_config_to_json(const DisaggregationConfig& c) {
  const auto optional = [](const std::optional<double>& value) -> nlohmann::json {
    if (value) return *value;
    return nullptr;
  };
  return {{"prefill", c.prefill},
          {"decode", c.decode},
          {"local_prefill_max_tokens", c.local_prefill_max_tokens},
          {"kv_transfer",
           {{"link", c.kv_transfer.link},
            {"bandwidth_bytes_per_s", optional(c.kv_transfer.bandwidth_bytes_per_s)},
            {"latency_s", optional(c.kv_transfer.latency_s)},
            {"block_overhead_s", c.kv_transfer.block_overhead_s},
            {"abort_timeout_s", c.kv_transfer.abort_timeout_s},
            {"layerwise", c.kv_transfer.layerwise},
            {"handoff", c.kv_transfer.handoff}}}};
}

nlohmann::json role_document(const nlohmann::json& document, const nlohmann::json& role) {
  nlohmann::json result = document;
  result.erase("disaggregation");
  for (const auto& [key, value] : role.items()) {
    // A role that names another policy takes none of the top level's parameters for it.
    const bool same_policy = !value.is_object() || !value.contains("name") ||
                             !result.contains(key) || !result[key].is_object() ||
                             result[key].value("name", "") == value["name"];
    if (value.is_object() && same_policy && result.contains(key) && result[key].is_object()) {
      result[key].merge_patch(value);
    } else {
      result[key] = value;
    }
  }
  return result;
}

}  // namespace servesim
