#include "sim/cli/run_options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::cli {
namespace {

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

}  // namespace

void add_run_options(po::options_description& options) {
  auto add = options.add_options();
  add("config", po::value<std::string>()->value_name("FILE"),
      "JSON run configuration (keys as in resolved_config.json; unknown keys, and keys the "
      "chosen policies do not read, are errors)");
  add("set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
      "override one configuration key, e.g. workload.arrival.cv=4 (repeatable; applied last)");
  for (const RunFlag& f : run_flags())
    add_flag(add, f.flag, f.type, f.value_name, f.help);
  add("no-bulk-decode",
      "advance every decode iteration on its own (engine.bulk_decode=false); results are the "
      "same, only slower");
  add("prompt-tokens", po::value<std::int64_t>()->value_name("N"),
      "fixed prompt length (with --output-tokens)");
  add("output-tokens", po::value<std::int64_t>()->value_name("M"),
      "fixed output length (with --prompt-tokens)");
  add("disaggregation", po::value<std::string>()->value_name("NpMd"),
      "prefill/decode disaggregation: N prefill and M decode replicas, e.g. 2p1d (= "
      "--prefill-replicas N --decode-replicas M; see docs/disaggregation.md)");

  po::options_description vllm(
      "vLLM's names (vllm serve, vllm bench serve), each the same run "
      "as the servesim flag after \"=\"",
      100, 50);
  auto add_vllm = vllm.add_options();
  for (const VllmFlag& f : vllm_flags())
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
  add_vllm("burstiness", po::value<double>()->value_name("B"),
           "vllm bench serve: gamma-distributed gaps of shape B (1 = Poisson, < 1 burstier): "
           "= --arrival poisson for 1, else --arrival gamma --cv 1/sqrt(B)");
  add_vllm("dataset-name", po::value<std::string>()->value_name("NAME"),
           "vllm bench serve: random (with --random-input-len, --random-output-len, "
           "--random-range-ratio) or sharegpt (= --workload sharegpt)");
  add_vllm("random-input-len", po::value<std::int64_t>()->value_name("N"),
           "--dataset-name random: prompt tokens (default 1024, as vLLM)");
  add_vllm("random-output-len", po::value<std::int64_t>()->value_name("N"),
           "--dataset-name random: output tokens (default 128)");
  add_vllm("random-range-ratio", po::value<double>()->value_name("R"),
           "--dataset-name random: lengths uniform in [N (1 - R), N (1 + R)], R in [0, 1) "
           "(default 0: = --prompt-tokens N --output-tokens M)");
  add_vllm("dataset-path", po::value<std::string>()->value_name("FILE"),
           "--dataset-name sharegpt: accepted and not read (the sharegpt preset stands for "
           "ShareGPT's lengths under vLLM's filter)");
  add_vllm("ignore-eos",
           "accepted: servesim always generates each request's output length, as vLLM with "
           "--ignore-eos");
  options.add(vllm);
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
  for (const RunFlag& f : run_flags())
    add_flag_value(f.flag, f.type);
  for (const VllmFlag& f : vllm_flags())
    add_flag_value(f.flag, f.type);
  for (const OtherSetting& s : other_settings()) {
    if (vm.count(s.name) == 0) continue;
    switch (s.kind) {
      case SettingKind::Text:
        add(s.name, vm[s.name].as<std::string>());
        break;
      case SettingKind::Integer:
        add(s.name, vm[s.name].as<std::int64_t>());
        break;
      case SettingKind::Number:
        add(s.name, vm[s.name].as<double>());
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
