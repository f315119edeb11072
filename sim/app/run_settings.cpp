#include "sim/app/run_settings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "sim/app/policy_list.h"
#include "sim/app/run_flags.h"
#include "sim/app/vllm_bench_settings.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/speculative/speculative_config.h"

namespace servesim {
namespace {

// The settings given, by name, with their values checked against the kind of each.
class GivenSettings {
 public:
  GivenSettings(const std::vector<RunSetting>& settings, SettingNames names) : names_(names) {
    for (const RunSetting& s : settings) {
      if (!is_run_setting(s.name)) {
        throw UsageError(origin(s.name) + ": not a run setting");
      }
      if (is_switch(s.name)) {
        if (!s.value.is_boolean()) fail(s, "a boolean");
        // A switch set to false is a switch not given.
        if (!s.value.get<bool>()) continue;
      }
      settings_.push_back(&s);
    }
  }

  bool has(std::string_view name) const { return find(name) != nullptr; }

  // How messages name a setting: "--prompt-tokens" or "prompt_tokens".
  std::string origin(std::string_view name) const {
    if (names_ == SettingNames::Flags) return "--" + std::string(name);
    std::string keyword(name);
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    return keyword;
  }

  // The value of a given setting as the text of an override's value (JSON, or for a Raw
  // flag a string as it was written: "4" is the number 4, "inf" the string).
  std::string json_text(std::string_view name, FlagType type) const {
    const RunSetting& s = *find(name);
    const nlohmann::json& v = s.value;
    switch (type) {
      case FlagType::Text:
        if (!v.is_string()) fail(s, "a string");
        return v.dump();
      case FlagType::Integer:
        if (!v.is_number_integer()) fail(s, "an integer");
        return std::to_string(v.get<std::int64_t>());
      case FlagType::Number:
        if (!v.is_number()) fail(s, "a number");
        return nlohmann::json(v.get<double>()).dump();
      case FlagType::Raw:
        // A rate: a number, or "inf" for every request at t = 0. Anything else is a
        // non-numeric value (a usage error, as for the numeric flags).
        if (v.is_string()) {
          const std::string text = v.get<std::string>();
          double number = 0;
          const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
          if (text != "inf" &&
              (text.empty() || error != std::errc() || end != text.data() + text.size())) {
            fail(s, "a number or inf");
          }
          return text;
        }
        if (!v.is_number()) fail(s, "a number or inf");
        return v.dump();
    }
    return {};
  }

  std::string text(std::string_view name) const {
    const RunSetting& s = *find(name);
    if (!s.value.is_string()) fail(s, "a string");
    return s.value.get<std::string>();
  }

  std::int64_t integer(std::string_view name) const {
    const RunSetting& s = *find(name);
    if (!s.value.is_number_integer()) fail(s, "an integer");
    return s.value.get<std::int64_t>();
  }

  double number(std::string_view name) const {
    const RunSetting& s = *find(name);
    if (!s.value.is_number()) fail(s, "a number");
    return s.value.get<double>();
  }

  // A repeatable setting's values: an array of strings, or one string.
  std::vector<std::string> list(std::string_view name) const {
    const RunSetting& s = *find(name);
    if (s.value.is_string()) return {s.value.get<std::string>()};
    std::vector<std::string> values;
    if (!s.value.is_array()) fail(s, "a list of strings");
    for (const auto& item : s.value) {
      if (!item.is_string()) fail(s, "a list of strings");
      values.push_back(item.get<std::string>());
    }
    return values;
  }

  // Both of two settings that make the same setting is a usage error.
  void refuse_both(std::string_view a, std::string_view b) const {
    if (has(a) && has(b)) {
      throw UsageError(origin(a) + " and " + origin(b) + " are the same setting; give one");
    }
  }

 private:
  const RunSetting* find(std::string_view name) const {
    for (const RunSetting* s : settings_) {
      if (s->name == name) return s;
    }
    return nullptr;
  }
  [[noreturn]] void fail(const RunSetting& s, const char* expected) const {
    throw UsageError(origin(s.name) + ": expected " + expected + ", got " + json_excerpt(s.value));
  }

  SettingNames names_;
  std::vector<const RunSetting*> settings_;
};

// vLLM's --goodput KEY:VALUE ... (milliseconds, as vllm bench serve takes them) as the SLO
// keys it sets, in seconds: a request is good when it meets every target given, which is
// servesim's slo_attainment test.
std::vector<ConfigOverride> goodput_overrides(const GivenSettings& given) {
  struct Target {
    std::string_view name;
    const char* key;
    const char* servesim_flag;
  };
  constexpr Target kTargets[] = {{"ttft", "slo.ttft_s", "slo-ttft"},
                                 {"tpot", "slo.tpot_s", "slo-tpot"},
                                 {"e2el", "slo.e2e_s", "slo-e2e"}};
  const std::string origin = given.origin("goodput");
  std::vector<ConfigOverride> overrides;
  std::vector<std::string_view> seen;
  const std::vector<std::string> pairs = given.list("goodput");
  for (const auto& pair : pairs) {
    const auto fail = [&pair, &origin](const std::string& why) {
      throw InputError(origin, "\"" + pair + "\": " + why +
                                   " (expected KEY:VALUE pairs, KEY ttft, tpot or e2el, "
                                   "VALUE milliseconds > 0, e.g. ttft:500 tpot:50)");
    };
    const std::size_t colon = pair.find(':');
    if (colon == std::string::npos) fail("no ':'");
    const std::string_view name = std::string_view(pair).substr(0, colon);
    const std::string_view text = std::string_view(pair).substr(colon + 1);
    const Target* target = nullptr;
    for (const Target& t : kTargets) {
      if (t.name == name) target = &t;
    }
    if (target == nullptr) fail("unknown metric \"" + std::string(name) + "\"");
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) fail("given twice");
    seen.push_back(name);
    double ms = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (error != std::errc() || end != text.data() + text.size() || text.empty() ||
        !std::isfinite(ms) || !(ms > 0)) {
      fail("\"" + std::string(text) + "\" is not a number of milliseconds > 0");
    }
    if (given.has(target->servesim_flag)) {
      throw UsageError(given.origin(target->servesim_flag) + " and " + origin + " " +
                       std::string(name) + ":... are the same setting; give one");
    }
    overrides.push_back(
        {origin, std::string(target->key) + "=" + nlohmann::json(ms / 1000).dump()});
  }
  return overrides;
}

// "2p1d": two prefill replicas and one decode replica.
std::pair<std::int64_t, std::int64_t> disaggregation_shorthand(const std::string& text,
                                                               const std::string& origin) {
  const auto count = [&](std::string_view digits, std::int64_t& value) {
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return error == std::errc() && end == digits.data() + digits.size() && value >= 1 &&
           value <= 1000000;
  };
  const std::size_t p = text.find('p');
  std::int64_t prefill = 0;
  std::int64_t decode = 0;
  if (p == std::string::npos || text.size() < p + 3 || text.back() != 'd' ||
      !count(std::string_view(text).substr(0, p), prefill) ||
      !count(std::string_view(text).substr(p + 1, text.size() - p - 2), decode)) {
    throw UsageError(origin +
                     ": expected NpMd, N prefill and M decode replicas (e.g. 2p1d), got \"" + text +
                     "\"");
  }
  return {prefill, decode};
}

// vllm bench serve's workload flags (sim/app/vllm_bench_settings.h).
void add_bench_overrides(const GivenSettings& given, std::vector<ConfigOverride>& overrides) {
  if (given.has("burstiness")) {
    given.refuse_both("arrival", "burstiness");
    given.refuse_both("cv", "burstiness");
    for (auto& o : burstiness_overrides(given.origin("burstiness"), given.number("burstiness")))
      overrides.push_back(std::move(o));
  }
  const std::string dataset = given.has("dataset-name") ? given.text("dataset-name") : "";
  if (!dataset.empty()) {
    check_dataset_name(given.origin("dataset-name"), dataset);
    given.refuse_both("workload", "dataset-name");
  }
  for (const char* name : {"random-input-len", "random-output-len", "random-range-ratio"}) {
    if (given.has(name) && dataset != "random") {
      throw UsageError(given.origin(name) + ": only with " + given.origin("dataset-name") +
                       " random");
    }
  }
  if (given.has("dataset-path") && dataset != "sharegpt") {
    throw UsageError(given.origin("dataset-path") + ": only with " + given.origin("dataset-name") +
                     " sharegpt (servesim's sharegpt preset stands for the file)");
  }
  if (dataset == "random") {
    given.refuse_both("prompt-tokens", "dataset-name");
    RandomDataset random;
    if (given.has("random-input-len")) random.input_len = given.integer("random-input-len");
    if (given.has("random-output-len")) random.output_len = given.integer("random-output-len");
    if (given.has("random-range-ratio")) random.range_ratio = given.number("random-range-ratio");
    overrides.push_back(random_dataset_override(given.origin("dataset-name"), random,
                                                given.origin("random-range-ratio")));
  }
}

// Each run flag given, as its key's override.
void add_run_flag_overrides(const GivenSettings& given, std::vector<ConfigOverride>& overrides) {
  for (const RunFlag& f : run_flags()) {
    // --dataset-name sharegpt is --workload sharegpt, in its place: before the workload.*
    // keys other flags set.
    if (std::string_view(f.flag) == "workload" && given.has("dataset-name") &&
        given.text("dataset-name") == "sharegpt") {
      overrides.push_back({given.origin("dataset-name"), "workload=\"sharegpt\""});
    }
    if (given.has(f.flag)) {
      overrides.push_back(
          {given.origin(f.flag), std::string(f.key) + "=" + given.json_text(f.flag, f.type)});
    }
  }
}

// Each vLLM flag given (refused beside the servesim flag it stands for), as its key's override.
void add_vllm_flag_overrides(const GivenSettings& given, std::vector<ConfigOverride>& overrides) {
  for (const VllmFlag& f : vllm_flags()) {
    if (!given.has(f.flag)) continue;
    for (std::string_view rest = f.same_as; !rest.empty();) {
      const std::size_t comma = rest.find(',');
      given.refuse_both(rest.substr(0, comma), f.flag);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    const std::string value = f.value_of != nullptr
                                  ? nlohmann::json(f.value_of(given.text(f.flag))).dump()
                                  : given.json_text(f.flag, f.type);
    overrides.push_back({given.origin(f.flag), std::string(f.key) + "=" + value});
  }
}

// The engine's switches: chunked prefill, prefix caching, expert parallelism.
void add_engine_switch_overrides(const GivenSettings& given, ConfigSources& sources) {
  given.refuse_both("enable-chunked-prefill", "no-enable-chunked-prefill");
  if (given.has("enable-chunked-prefill")) sources.chunked_prefill = true;
  if (given.has("no-enable-chunked-prefill")) sources.chunked_prefill = false;
  given.refuse_both("enable-prefix-caching", "no-enable-prefix-caching");
  for (const char* flag : {"enable-prefix-caching", "no-enable-prefix-caching"}) {
    if (given.has(flag)) {
      sources.overrides.push_back(
          {given.origin(flag),
           std::string("engine.enable_prefix_caching=") + (flag[0] == 'e' ? "true" : "false")});
    }
  }
  if (given.has("enable-expert-parallel")) {
    sources.overrides.push_back({given.origin("enable-expert-parallel"), "expert_parallel=true"});
  }
}

// --speculative-config and --acceptance-rate.
void add_speculative_overrides(const GivenSettings& given, std::vector<ConfigOverride>& overrides) {
  if (given.has("speculative-config")) {
    const std::string origin = given.origin("speculative-config");
    const nlohmann::json section = parse_json_text(given.text("speculative-config"), origin);
    if (!section.is_object()) {
      throw InputError(origin,
                       "expected a JSON object, e.g. {\"method\": \"ngram\", "
                       "\"num_speculative_tokens\": 3}");
    }
    overrides.push_back({origin, "speculative=" + section.dump()});
  }
  if (given.has("acceptance-rate")) {
    const std::string origin = given.origin("acceptance-rate");
    overrides.push_back(
        {origin, "speculative.acceptance_rate=" +
                     acceptance_rate_from_text(given.text("acceptance-rate"), origin).dump()});
  }
}

// --prompt-tokens with --output-tokens: fixed lengths.
void add_fixed_length_overrides(const GivenSettings& given,
                                std::vector<ConfigOverride>& overrides) {
  const bool prompt = given.has("prompt-tokens");
  const bool output = given.has("output-tokens");
  if (prompt != output) {
    throw UsageError(given.origin("prompt-tokens") + " and " + given.origin("output-tokens") +
                     " go together (fixed lengths)");
  }
  if (prompt) {
    const auto fixed = [](std::int64_t tokens) {
      return nlohmann::json{{"distribution", "fixed"}, {"tokens", tokens}};
    };
    const nlohmann::json lengths = {{"distribution", "independent"},
                                    {"prompt", fixed(given.integer("prompt-tokens"))},
                                    {"output", fixed(given.integer("output-tokens"))}};
    overrides.push_back({given.origin("prompt-tokens"), "workload.lengths=" + lengths.dump()});
  }
}

// --disaggregation NpMd (refused beside --replicas, --prefill-replicas, --decode-replicas).
void add_disaggregation_overrides(const GivenSettings& given,
                                  std::vector<ConfigOverride>& overrides) {
  for (const char* pools : {"disaggregation", "prefill-replicas", "decode-replicas"}) {
    if (given.has("replicas") && given.has(pools)) {
      throw UsageError(given.origin("replicas") + " with " + given.origin(pools) +
                       ": each pool has its own count; give " + given.origin("prefill-replicas") +
                       " N " + given.origin("decode-replicas") + " M (or " +
                       given.origin("disaggregation") + " NpMd) instead");
    }
  }
  if (given.has("disaggregation")) {
    const std::string origin = given.origin("disaggregation");
    const auto [prefill, decode] = disaggregation_shorthand(given.text("disaggregation"), origin);
    given.refuse_both("prefill-replicas", "disaggregation");
    given.refuse_both("decode-replicas", "disaggregation");
    overrides.push_back({origin, "disaggregation.prefill.replicas=" + std::to_string(prefill)});
    overrides.push_back({origin, "disaggregation.decode.replicas=" + std::to_string(decode)});
  }
}

// The kind of a run flag an axis may name that is not a key's flag: one value (text or a
// number) that makes its overrides alone; none for a file, a list, a switch, or the fixed
// lengths, which go in pairs.
std::optional<SettingKind> settable_other_setting(const std::string& flag) {
  for (const OtherSetting& setting : other_settings()) {
    if (setting.name != flag) continue;
    const bool one_value = setting.kind == SettingKind::Text ||
                           setting.kind == SettingKind::Integer ||
                           setting.kind == SettingKind::Number;
    if (one_value && flag != "config" && flag != "prompt-tokens" && flag != "output-tokens") {
      return setting.kind;
    }
  }
  return std::nullopt;
}

}  // namespace

ConfigSources run_config_sources(const std::vector<RunSetting>& settings, SettingNames names) {
  const GivenSettings given(settings, names);
  ConfigSources sources;
  if (given.has("config")) sources.config_file = given.text("config");
  add_run_flag_overrides(given, sources.overrides);
  add_vllm_flag_overrides(given, sources.overrides);
  add_engine_switch_overrides(given, sources);
  add_speculative_overrides(given, sources.overrides);
  if (given.has("goodput")) {
    for (auto& o : goodput_overrides(given))
      sources.overrides.push_back(std::move(o));
  }
  add_bench_overrides(given, sources.overrides);
  add_fixed_length_overrides(given, sources.overrides);
  add_disaggregation_overrides(given, sources.overrides);
  if (given.has("no-bulk-decode")) {
    sources.overrides.push_back({given.origin("no-bulk-decode"), "engine.bulk_decode=false"});
  }
  if (given.has("set")) {
    for (const auto& assignment : given.list("set")) {
      sources.overrides.push_back({given.origin("set"), assignment});
    }
  }
  return sources;
}

std::vector<ConfigOverride> axis_overrides(const std::string& name, const nlohmann::json& value) {
  const std::string origin = "--grid " + name;
  if (name == "policy") {
    if (!value.is_string()) {
      throw UsageError(origin + ": expected SCHEDULER:ALLOCATOR[:PARAM[:PLACEMENT]], got " +
                       value.dump());
    }
    auto policies = parse_policy_list(value.get<std::string>(), origin);
    if (policies.size() != 1) throw UsageError(origin + ": one policy per value");
    return policies.front().overrides;
  }
  if (name.find('.') == std::string::npos) {
    // A flag's name, or the same with underscores (time_scale for --time-scale).
    std::string flag = name;
    if (!config_key_for_flag(flag)) std::replace(flag.begin(), flag.end(), '_', '-');
    if (const auto flag_key = config_key_for_flag(flag)) {
      return {ConfigOverride{origin, *flag_key + "=" + config_value_for_flag(flag, value).dump()}};
    }
    // A run flag that sets no single key (--acceptance-rate, --random-input-len, ...): the
    // overrides the flag makes, as run makes them from this value.
    if (const auto other = settable_other_setting(flag)) {
      const nlohmann::json text_or_value =
          *other == SettingKind::Text && !value.is_string() ? nlohmann::json(value.dump()) : value;
      ConfigSources sources = run_config_sources({{flag, text_or_value}}, SettingNames::Flags);
      for (auto& override_made : sources.overrides)
        override_made.origin = origin;
      return sources.overrides;
    }
  }
  return {ConfigOverride{origin, name + "=" + value.dump()}};
}

}  // namespace servesim
