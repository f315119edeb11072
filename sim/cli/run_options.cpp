#include "sim/cli/run_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/cli/vllm_names.h"
#include "sim/core/error.h"

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

std::string json_text(FlagType type, const po::variable_value& value) {
  switch (type) {
    case FlagType::Text:
      return nlohmann::json(value.as<std::string>()).dump();
    case FlagType::Integer:
      return std::to_string(value.as<std::int64_t>());
    case FlagType::Number:
      return nlohmann::json(value.as<double>()).dump();
    case FlagType::Raw:
      return value.as<std::string>();
  }
  return {};
}

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

// Both of two flags that make the same setting is a usage error.
void refuse_both(const po::variables_map& vm, const std::string& a, const std::string& b) {
  if (vm.count(a) != 0 && vm.count(b) != 0) {
    throw UsageError("--" + a + " and --" + b + " are the same setting; give one");
  }
}

// vLLM's --goodput KEY:VALUE ... (milliseconds, as vllm bench serve takes them) as the SLO
// keys it sets, in seconds: a request is good when it meets every target given, which is
// servesim's slo_attainment test.
std::vector<ConfigOverride> goodput_overrides(const po::variables_map& vm) {
  struct Target {
    std::string_view name;
    const char* key;
    const char* servesim_flag;
  };
  constexpr Target kTargets[] = {{"ttft", "slo.ttft_s", "slo-ttft"},
                                 {"tpot", "slo.tpot_s", "slo-tpot"},
                                 {"e2el", "slo.e2e_s", "slo-e2e"}};
  std::vector<ConfigOverride> overrides;
  std::vector<std::string_view> seen;
  for (const auto& pair : vm["goodput"].as<std::vector<std::string>>()) {
    const auto fail = [&pair](const std::string& why) {
      throw InputError("--goodput", "\"" + pair + "\": " + why +
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
    if (vm.count(target->servesim_flag) != 0) {
      throw UsageError(std::string("--") + target->servesim_flag + " and --goodput " +
                       std::string(name) + ":... are the same setting; give one");
    }
    overrides.push_back(
        {"--goodput", std::string(target->key) + "=" + nlohmann::json(ms / 1000).dump()});
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
           "engine.enable_prefix_caching=true: recorded in resolved_config.json, no effect yet "
           "(servesim has no prefix caching; every prompt token is computed)");
  add_vllm("no-enable-prefix-caching", "engine.enable_prefix_caching=false (the default)");
  add_vllm("goodput", po::value<std::vector<std::string>>()->value_name("KEY:MS")->multitoken(),
           "SLO targets in milliseconds, as vllm bench serve: ttft:500 tpot:50 e2el:2000 (= "
           "--slo-ttft 0.5 --slo-tpot 0.05 --slo-e2e 2); a request is good when it meets each");
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

ConfigSources run_config_sources(const po::variables_map& vm) {
  ConfigSources sources;
  if (vm.count("config") != 0) sources.config_file = vm["config"].as<std::string>();
  for (const RunFlag& f : kRunFlags) {
    if (vm.count(f.flag) != 0) {
      sources.overrides.push_back(
          {std::string("--") + f.flag, std::string(f.key) + "=" + json_text(f.type, vm[f.flag])});
    }
  }
  for (const VllmFlag& f : kVllmFlags) {
    if (vm.count(f.flag) == 0) continue;
    for (std::string_view rest = f.same_as; !rest.empty();) {
      const std::size_t comma = rest.find(',');
      refuse_both(vm, std::string(rest.substr(0, comma)), f.flag);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    const std::string value = f.value_of != nullptr
                                  ? nlohmann::json(f.value_of(vm[f.flag].as<std::string>())).dump()
                                  : json_text(f.type, vm[f.flag]);
    sources.overrides.push_back({std::string("--") + f.flag, std::string(f.key) + "=" + value});
  }
  refuse_both(vm, "enable-chunked-prefill", "no-enable-chunked-prefill");
  if (vm.count("enable-chunked-prefill") != 0) sources.chunked_prefill = true;
  if (vm.count("no-enable-chunked-prefill") != 0) sources.chunked_prefill = false;
  refuse_both(vm, "enable-prefix-caching", "no-enable-prefix-caching");
  for (const char* flag : {"enable-prefix-caching", "no-enable-prefix-caching"}) {
    if (vm.count(flag) != 0) {
      sources.overrides.push_back(
          {std::string("--") + flag,
           std::string("engine.enable_prefix_caching=") + (flag[0] == 'e' ? "true" : "false")});
    }
  }
  if (vm.count("goodput") != 0) {
    for (auto& o : goodput_overrides(vm))
      sources.overrides.push_back(std::move(o));
  }
  const bool prompt = vm.count("prompt-tokens") != 0;
  const bool output = vm.count("output-tokens") != 0;
  if (prompt != output) {
    throw UsageError("--prompt-tokens and --output-tokens go together (fixed lengths)");
  }
  if (prompt) {
    const auto fixed = [](std::int64_t tokens) {
      return nlohmann::json{{"distribution", "fixed"}, {"tokens", tokens}};
    };
    const nlohmann::json lengths = {{"distribution", "independent"},
                                    {"prompt", fixed(vm["prompt-tokens"].as<std::int64_t>())},
                                    {"output", fixed(vm["output-tokens"].as<std::int64_t>())}};
    sources.overrides.push_back({"--prompt-tokens", "workload.lengths=" + lengths.dump()});
  }
  if (vm.count("no-bulk-decode") != 0) {
    sources.overrides.push_back({"--no-bulk-decode", "engine.bulk_decode=false"});
  }
  if (vm.count("set") != 0) {
    for (const auto& assignment : vm["set"].as<std::vector<std::string>>()) {
      sources.overrides.push_back({"--set", assignment});
    }
  }
  return sources;
}

}  // namespace servesim::cli
