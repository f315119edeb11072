#include "sim/cli/run_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/cli/vllm_names.h"
#include "sim/config/json_reader.h"
#include "sim/core/error.h"
#include "sim/speculative/speculative_config.h"

namespace servesim::cli {
namespace {

enum class FlagType { Text, Integer, Number, Raw };

// A convenience flag and the configuration key it sets. Raw values are passed through as
// text, so "--rate 4" becomes a number and "--rate inf" the string the workload accepts.
struct RunFlag {
  const char* flag;
  const char* key;
  FlagType type;
  const char* value_name;
  const char* help;
};

constexpr RunFlag kRunFlags[] = {
    {"model", "model", FlagType::Text, "NAME|PATH", "model (default llama-3-8b)"},
    {"hw", "hardware", FlagType::Text, "NAME|PATH", "hardware profile (default h100-sxm)"},
    {"tp", "tp", FlagType::Integer, "T", "tensor-parallel GPUs per replica (default 1)"},
    {"pp", "pp", FlagType::Integer, "P", "pipeline stages per replica (default 1)"},
    {"dp", "data_parallel", FlagType::Integer, "D",
     "data-parallel attention ranks of an MoE replica, each of --tp GPUs, with expert "
     "parallelism over all D x TP GPUs (default 1)"},
    {"expert-load-imbalance", "expert_load_imbalance", FlagType::Number, "F",
     "with expert parallelism: the busiest GPU's routed tokens over the even share (default 1)"},
    {"replicas", "replicas", FlagType::Integer, "N", "model replicas (default 1)"},
    {"router", "router", FlagType::Text, "NAME",
     "round_robin (default), least_outstanding, least_kv or random"},
    {"engine", "engine.name", FlagType::Text, "NAME|PATH",
     "serving engine from engines/ or a profile path: its scheduler and defaults, host costs, "
     "CUDA graphs and kernel factors (default vllm, vLLM's V1 engine)"},
    {"scheduler", "scheduler.name", FlagType::Text, "NAME",
     "batch scheduler (default: the engine's; vllm_v1 for vllm)"},
    {"max-num-seqs", "scheduler.max_num_seqs", FlagType::Integer, "N",
     "vllm, orca, sarathi, vllm_v1: running requests per replica at most (default: the "
     "engine's, 1024 for vllm on a GPU of 70 GiB or more; 256 otherwise)"},
    {"max-batched-tokens", "scheduler.max_num_batched_tokens", FlagType::Integer, "TOKENS",
     "vllm, orca, vllm_v1: tokens (vllm, vllm_v1) or prompt tokens (orca) per iteration at most "
     "(default 8192; vllm: max(max-len, 2048), and at least max-len)"},
    {"batch-size", "scheduler.batch_size", FlagType::Integer, "N",
     "static scheduler: requests per batch (default 8)"},
    {"token-budget", "scheduler.token_budget", FlagType::Integer, "TOKENS",
     "sarathi scheduler: tokens per iteration (default 512)"},
    {"preemption", "scheduler.preemption", FlagType::Text, "MODE",
     "vllm: recompute (default) or swap, over the host link into memory.swap_space_gib"},
    {"swap-space", "memory.swap_space_gib", FlagType::Number, "GIB",
     "host memory per GPU for --preemption swap, GiB (default 4; vLLM's name and unit)"},
    {"allocator", "allocator.name", FlagType::Text, "NAME", "KV allocator (default paged)"},
    {"block-size", "allocator.block_size", FlagType::Integer, "TOKENS",
     "paged allocator: tokens per block (default: the engine's, 16 for vllm)"},
    {"reservation", "allocator.reservation", FlagType::Text, "POLICY",
     "contiguous allocator: max (default), pow2, oracle or fixed"},
    {"placement", "allocator.placement", FlagType::Text, "POLICY",
     "contiguous allocator: buddy (default) or first_fit"},
    {"cost-model", "cost_model.name", FlagType::Text, "NAME",
     "iteration cost model (default roofline)"},
    {"mem-util", "memory.mem_util", FlagType::Number, "F",
     "share of GPU memory the engine may use (default: the engine's, 0.9 for vllm)"},
    {"kv-capacity-tokens", "memory.kv_capacity_tokens", FlagType::Integer, "TOKENS",
     "KV capacity per replica, overriding the computed one"},
    {"kv-capacity-gib", "memory.kv_capacity_gib", FlagType::Number, "GIB",
     "KV capacity per replica in GiB of KV bytes, overriding the computed one"},
    {"max-len", "max_len", FlagType::Integer, "TOKENS",
     "maximum prompt + output tokens, at most the model's max_position_embeddings (the "
     "default)"},
    {"max-len-policy", "max_len_policy", FlagType::Text, "POLICY",
     "a request whose prompt + output passes --max-len: cut (default; its output stops at "
     "max-len, as vLLM's engine) or reject (as vLLM's API server for prompt + max_tokens)"},
    {"weight-dtype", "weight_dtype", FlagType::Text, "DTYPE", "weight format (default auto)"},
    {"kv-dtype", "kv_dtype", FlagType::Text, "DTYPE", "KV-cache format (default auto)"},
    {"workload", "workload", FlagType::Text, "NAME|PATH",
     "workload preset from workloads/, a JSON spec, or a trace to replay (Azure or plain CSV, "
     "Mooncake JSON lines; told by content) (default sharegpt at 8 req/s, 2,000 requests)"},
    {"arrival", "workload.arrival.process", FlagType::Text, "PROCESS",
     "poisson, gamma, constant, closed_loop or trace"},
    {"rate", "workload.arrival.rate_per_s", FlagType::Raw, "REQ_PER_S",
     "mean arrival rate, requests/s; inf sends everything at time 0"},
    {"cv", "workload.arrival.cv", FlagType::Number, "CV",
     "gamma arrivals: coefficient of variation of the gaps (1 = Poisson, > 1 bursty)"},
    {"num-requests", "workload.num_requests", FlagType::Integer, "N", "stop after N requests"},
    {"duration", "workload.duration_s", FlagType::Number, "SECONDS", "no arrivals after this time"},
    {"time-scale", "workload.trace.time_scale", FlagType::Number, "F",
     "trace replay: multiply arrival times by F (2 = half the rate)"},
    {"seed", "seed", FlagType::Integer, "N", "random seed (default 0)"},
    {"slo-ttft", "slo.ttft_s", FlagType::Number, "SECONDS", "TTFT target for slo_attainment"},
    {"slo-tpot", "slo.tpot_s", FlagType::Number, "SECONDS", "TPOT target for slo_attainment"},
    {"slo-e2e", "slo.e2e_s", FlagType::Number, "SECONDS", "E2E latency target for slo_attainment"},
};

// vLLM's names (vllm serve, EngineArgs) for settings servesim's flags make: each sets `key`,
// the key of the servesim flags in `same_as` (comma-separated), so that either gives the same
// run, and giving both is refused; `value_of` translates vLLM's value names where they differ.
// --max-num-seqs and --block-size are already vLLM's names.
struct VllmFlag {
  const char* flag;
  const char* key;
  const char* same_as;
  FlagType type;
  const char* value_name;
  const char* help;
  std::string (*value_of)(const std::string& value);
};

constexpr VllmFlag kVllmFlags[] = {
    {"tensor-parallel-size", "tp", "tp", FlagType::Integer, "T", "= --tp", nullptr},
    {"pipeline-parallel-size", "pp", "pp", FlagType::Integer, "P", "= --pp", nullptr},
    {"data-parallel-size", "data_parallel", "dp", FlagType::Integer, "D",
     "= --dp (with --enable-expert-parallel: data-parallel attention)", nullptr},
    {"max-model-len", "max_len", "max-len", FlagType::Integer, "TOKENS", "= --max-len", nullptr},
    {"gpu-memory-utilization", "memory.mem_util", "mem-util", FlagType::Number, "F", "= --mem-util",
     nullptr},
    {"max-num-batched-tokens", kSchedulerTokenLimitKey, "max-batched-tokens,token-budget",
     FlagType::Integer, "TOKENS",
     "tokens per iteration: = --max-batched-tokens (vllm, orca), = --token-budget (sarathi, "
     "the chunked-prefill budget)",
     nullptr},
    {"kv-cache-dtype", "kv_dtype", "kv-dtype", FlagType::Text, "DTYPE",
     "= --kv-dtype: auto, float16, bfloat16, fp8, fp8_e4m3 or fp8_e5m2 (both fp8: one byte per "
     "element)",
     &kv_dtype_for_vllm},
    {"quantization", "weight_dtype", "weight-dtype", FlagType::Text, "METHOD",
     "= --weight-dtype: fp8, fbgemm_fp8 (fp8); awq, awq_marlin, gptq, gptq_marlin (int4)",
     &weight_dtype_for_vllm_quantization},
};

void add_flag(po::options_description_easy_init& add, const char* flag, FlagType type,
              const char* value_name, const std::string& help) {
  switch (type) {
    case FlagType::Text:
    case FlagType::Raw:
      add(flag, po::value<std::string>()->value_name(value_name), help.c_str());
      break;
    case FlagType::Integer:
      add(flag, po::value<std::int64_t>()->value_name(value_name), help.c_str());
      break;
    case FlagType::Number:
      add(flag, po::value<double>()->value_name(value_name), help.c_str());
      break;
  }
}

// Settings that are not a flag of the tables above.
enum class SettingKind { Text, Integer, Switch, List };
struct OtherSetting {
  const char* name;
  SettingKind kind;
};
constexpr OtherSetting kOtherSettings[] = {
    {"config", SettingKind::Text},
    {"set", SettingKind::List},
    {"prompt-tokens", SettingKind::Integer},
    {"output-tokens", SettingKind::Integer},
    {"no-bulk-decode", SettingKind::Switch},
    {"enable-chunked-prefill", SettingKind::Switch},
    {"no-enable-chunked-prefill", SettingKind::Switch},
    {"enable-prefix-caching", SettingKind::Switch},
    {"no-enable-prefix-caching", SettingKind::Switch},
    {"enable-expert-parallel", SettingKind::Switch},
    {"goodput", SettingKind::List},
    {"speculative-config", SettingKind::Text},
    {"acceptance-rate", SettingKind::Text},
};

bool is_switch(std::string_view name) {
  for (const OtherSetting& s : kOtherSettings) {
    if (s.name == name) return s.kind == SettingKind::Switch;
  }
  return false;
}

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
        if (v.is_string()) return v.get<std::string>();
        if (!v.is_number()) fail(s, "a number or a string");
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
    throw UsageError(origin(s.name) + ": expected " + expected + ", got " + s.value.dump());
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

}  // namespace

void add_run_options(po::options_description& options) {
  auto add = options.add_options();
  add("config", po::value<std::string>()->value_name("FILE"),
      "JSON run configuration (keys as in resolved_config.json; unknown keys, and keys the "
      "chosen policies do not read, are errors)");
  add("set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
      "override one configuration key, e.g. workload.arrival.cv=4 (repeatable; applied last)");
  for (const RunFlag& f : kRunFlags)
    add_flag(add, f.flag, f.type, f.value_name, f.help);
  add("no-bulk-decode",
      "advance every decode iteration on its own (engine.bulk_decode=false); results are the "
      "same, only slower");
  add("prompt-tokens", po::value<std::int64_t>()->value_name("N"),
      "fixed prompt length (with --output-tokens)");
  add("output-tokens", po::value<std::int64_t>()->value_name("M"),
      "fixed output length (with --prompt-tokens)");

  po::options_description vllm(
      "vLLM's names (vllm serve, vllm bench serve), each the same run "
      "as the servesim flag after \"=\"",
      100, 50);
  auto add_vllm = vllm.add_options();
  for (const VllmFlag& f : kVllmFlags)
    add_flag(add_vllm, f.flag, f.type, f.value_name, f.help);
  add_vllm("enable-chunked-prefill",
           "chunk prompts into the per-iteration token budget: the engine's scheduler when it "
           "chunks (vllm_v1), else --scheduler sarathi (with --scheduler, it must name a "
           "scheduler that chunks)");
  add_vllm("no-enable-chunked-prefill",
           "refuse a scheduler that chunks prompts (servesim's vllm scheduler does not)");
  add_vllm("enable-prefix-caching",
           "engine.enable_prefix_caching=true: automatic prefix caching in the paged allocator, "
           "as vLLM V1 (the default of engines vllm and sglang); prompts whose workload names "
           "their content reuse cached KV blocks");
  add_vllm("no-enable-prefix-caching",
           "engine.enable_prefix_caching=false: every prompt token is computed (the default of "
           "the other engines)");
  add_vllm("enable-expert-parallel",
           "expert_parallel=true: MoE experts spread whole over the TP GPUs (EP size = TP), "
           "with dispatch and combine all-to-alls (see docs/cost_model.md)");
  add_vllm("goodput", po::value<std::vector<std::string>>()->value_name("KEY:MS")->multitoken(),
           "SLO targets in milliseconds, as vllm bench serve: ttft:500 tpot:50 e2el:2000 (= "
           "--slo-ttft 0.5 --slo-tpot 0.05 --slo-e2e 2); a request is good when it meets each");
  add_vllm("speculative-config", po::value<std::string>()->value_name("JSON"),
           "speculative decoding as vLLM takes it, e.g. '{\"method\": \"eagle\", "
           "\"num_speculative_tokens\": 3}' (method draft_model with \"model\", eagle, ngram "
           "or mtp; sets the speculative section; see docs/speculative.md)");
  add_vllm("acceptance-rate", po::value<std::string>()->value_name("A|A1,A2,..."),
           "servesim: the probability the target accepts a draft token, in [0, 1), or one per "
           "draft position (speculative.acceptance_rate)");
  options.add(vllm);
}

std::optional<std::string> config_key_for_flag(std::string_view flag) {
  for (const RunFlag& f : kRunFlags) {
    if (f.flag == flag) return std::string(f.key);
  }
  for (const VllmFlag& f : kVllmFlags) {
    if (f.flag == flag) return std::string(f.key);
  }
  return std::nullopt;
}

nlohmann::json config_value_for_flag(std::string_view flag, const nlohmann::json& value) {
  for (const VllmFlag& f : kVllmFlags) {
    if (f.flag == flag && f.value_of != nullptr && value.is_string()) {
      return f.value_of(value.get<std::string>());
    }
  }
  return value;
}

bool is_run_setting(std::string_view name) {
  for (const OtherSetting& s : kOtherSettings) {
    if (s.name == name) return true;
  }
  return config_key_for_flag(name).has_value();
}

ConfigSources run_config_sources(const std::vector<RunSetting>& settings, SettingNames names) {
  const GivenSettings given(settings, names);
  ConfigSources sources;
  if (given.has("config")) sources.config_file = given.text("config");
  for (const RunFlag& f : kRunFlags) {
    if (given.has(f.flag)) {
      sources.overrides.push_back(
          {given.origin(f.flag), std::string(f.key) + "=" + given.json_text(f.flag, f.type)});
    }
  }
  for (const VllmFlag& f : kVllmFlags) {
    if (!given.has(f.flag)) continue;
    for (std::string_view rest = f.same_as; !rest.empty();) {
      const std::size_t comma = rest.find(',');
      given.refuse_both(rest.substr(0, comma), f.flag);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    const std::string value = f.value_of != nullptr
                                  ? nlohmann::json(f.value_of(given.text(f.flag))).dump()
                                  : given.json_text(f.flag, f.type);
    sources.overrides.push_back({given.origin(f.flag), std::string(f.key) + "=" + value});
  }
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
  if (given.has("speculative-config")) {
    const std::string origin = given.origin("speculative-config");
    const nlohmann::json section = parse_json_text(given.text("speculative-config"), origin);
    if (!section.is_object()) {
      throw InputError(origin,
                       "expected a JSON object, e.g. {\"method\": \"ngram\", "
                       "\"num_speculative_tokens\": 3}");
    }
    sources.overrides.push_back({origin, "speculative=" + section.dump()});
  }
  if (given.has("acceptance-rate")) {
    const std::string origin = given.origin("acceptance-rate");
    sources.overrides.push_back(
        {origin, "speculative.acceptance_rate=" +
                     acceptance_rate_from_text(given.text("acceptance-rate"), origin).dump()});
  }
  if (given.has("goodput")) {
    for (auto& o : goodput_overrides(given))
      sources.overrides.push_back(std::move(o));
  }
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
    sources.overrides.push_back(
        {given.origin("prompt-tokens"), "workload.lengths=" + lengths.dump()});
  }
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

ConfigSources run_config_sources(const po::variables_map& vm) {
  std::vector<RunSetting> settings;
  const auto add = [&](const char* name, nlohmann::json value) {
    settings.push_back({name, std::move(value)});
  };
  const auto add_flag_value = [&](const char* name, FlagType type) {
    if (vm.count(name) == 0) return;
    switch (type) {
      case FlagType::Text:
      case FlagType::Raw:
        add(name, vm[name].as<std::string>());
        break;
      case FlagType::Integer:
        add(name, vm[name].as<std::int64_t>());
        break;
      case FlagType::Number:
        add(name, vm[name].as<double>());
        break;
    }
  };
  for (const RunFlag& f : kRunFlags)
    add_flag_value(f.flag, f.type);
  for (const VllmFlag& f : kVllmFlags)
    add_flag_value(f.flag, f.type);
  for (const OtherSetting& s : kOtherSettings) {
    if (vm.count(s.name) == 0) continue;
    switch (s.kind) {
      case SettingKind::Text:
        add(s.name, vm[s.name].as<std::string>());
        break;
      case SettingKind::Integer:
        add(s.name, vm[s.name].as<std::int64_t>());
        break;
      case SettingKind::Switch:
        add(s.name, true);
        break;
      case SettingKind::List:
        add(s.name, vm[s.name].as<std::vector<std::string>>());
        break;
    }
  }
  return run_config_sources(settings, SettingNames::Flags);
}

}  // namespace servesim::cli
