#include "sim/cli/run_options.h"

#include <nlohmann/json.hpp>

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
    {"scheduler", "scheduler.name", FlagType::Text, "NAME", "batch scheduler (default vllm)"},
    {"max-num-seqs", "scheduler.max_num_seqs", FlagType::Integer, "N",
     "vllm, orca, sarathi, vllm_v1: running requests per replica at most (default 256; "
     "vllm_v1 1024)"},
    {"max-batched-tokens", "scheduler.max_num_batched_tokens", FlagType::Integer, "TOKENS",
     "vllm, orca, vllm_v1: tokens (vllm, vllm_v1) or prompt tokens (orca) per iteration at most "
     "(default 8192)"},
    {"batch-size", "scheduler.batch_size", FlagType::Integer, "N",
     "static scheduler: requests per batch (default 8)"},
    {"token-budget", "scheduler.token_budget", FlagType::Integer, "TOKENS",
     "sarathi scheduler: tokens per iteration (default 512)"},
    {"preemption", "scheduler.preemption", FlagType::Text, "MODE",
     "vllm: recompute (default) or swap, over the host link into memory.swap_space_gib"},
    {"allocator", "allocator.name", FlagType::Text, "NAME", "KV allocator (default paged)"},
    {"block-size", "allocator.block_size", FlagType::Integer, "TOKENS",
     "paged allocator: tokens per block (default 16)"},
    {"reservation", "allocator.reservation", FlagType::Text, "POLICY",
     "contiguous allocator: max (default), pow2, oracle or fixed"},
    {"placement", "allocator.placement", FlagType::Text, "POLICY",
     "contiguous allocator: buddy (default) or first_fit"},
    {"cost-model", "cost_model.name", FlagType::Text, "NAME",
     "iteration cost model (default roofline)"},
    {"mem-util", "memory.mem_util", FlagType::Number, "F",
     "share of GPU memory the engine may use (default 0.9)"},
    {"kv-capacity-tokens", "memory.kv_capacity_tokens", FlagType::Integer, "TOKENS",
     "KV capacity per replica, overriding the computed one"},
    {"kv-capacity-gib", "memory.kv_capacity_gib", FlagType::Number, "GIB",
     "KV capacity per replica in GiB of KV bytes, overriding the computed one"},
    {"max-len", "max_len", FlagType::Integer, "TOKENS",
     "maximum prompt + output tokens (default the model's max_position_embeddings)"},
    {"weight-dtype", "weight_dtype", FlagType::Text, "DTYPE", "weight format (default auto)"},
    {"kv-dtype", "kv_dtype", FlagType::Text, "DTYPE", "KV-cache format (default auto)"},
    {"workload", "workload", FlagType::Text, "NAME|PATH",
     "workload preset from workloads/ or a JSON file (default sharegpt at 8 req/s, 2,000 "
     "requests)"},
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
};

std::string json_text(const RunFlag& flag, const po::variable_value& value) {
  switch (flag.type) {
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

}  // namespace

void add_run_options(po::options_description& options) {
  auto add = options.add_options();
  add("config", po::value<std::string>()->value_name("FILE"),
      "JSON run configuration (keys as in resolved_config.json; unknown keys, and keys the "
      "chosen policies do not read, are errors)");
  add("set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
      "override one configuration key, e.g. workload.arrival.cv=4 (repeatable; applied last)");
  for (const RunFlag& f : kRunFlags) {
    switch (f.type) {
      case FlagType::Text:
      case FlagType::Raw:
        add(f.flag, po::value<std::string>()->value_name(f.value_name), f.help);
        break;
      case FlagType::Integer:
        add(f.flag, po::value<std::int64_t>()->value_name(f.value_name), f.help);
        break;
      case FlagType::Number:
        add(f.flag, po::value<double>()->value_name(f.value_name), f.help);
        break;
    }
  }
  add("no-bulk-decode",
      "advance every decode iteration on its own (engine.bulk_decode=false); results are the "
      "same, only slower");
  add("prompt-tokens", po::value<std::int64_t>()->value_name("N"),
      "fixed prompt length (with --output-tokens)");
  add("output-tokens", po::value<std::int64_t>()->value_name("M"),
      "fixed output length (with --prompt-tokens)");
}

std::optional<std::string> config_key_for_flag(std::string_view flag) {
  for (const RunFlag& f : kRunFlags) {
    if (f.flag == flag) return std::string(f.key);
  }
  return std::nullopt;
}

ConfigSources run_config_sources(const po::variables_map& vm) {
  ConfigSources sources;
  if (vm.count("config") != 0) sources.config_file = vm["config"].as<std::string>();
  for (const RunFlag& f : kRunFlags) {
    if (vm.count(f.flag) != 0) {
      sources.overrides.push_back(
          {std::string("--") + f.flag, std::string(f.key) + "=" + json_text(f, vm[f.flag])});
    }
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
