#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/app/config_assembly.h"
#include "sim/app/output_directory.h"
#include "sim/app/simulation.h"
#include "sim/cli/options.h"
#include "sim/core/error.h"
#include "sim/metrics/impl/console_reporter.h"
#include "sim/metrics/impl/csv_reporter.h"
#include "sim/metrics/impl/json_reporter.h"
#include "sim/metrics/output_file.h"
#include "sim/metrics/summary_json.h"

namespace servesim::cli {
namespace {

// Convenience flags and the configuration key each one sets.
struct FlagKey {
  const char* flag;
  const char* key;
};
constexpr FlagKey kFlagKeys[] = {
    {"model", "model"},
    {"hw", "hardware"},
    {"tp", "tp"},
    {"pp", "pp"},
    {"replicas", "replicas"},
    {"router", "router"},
    {"scheduler", "scheduler.name"},
    {"max-num-seqs", "scheduler.max_num_seqs"},
    {"max-batched-tokens", "scheduler.max_num_batched_tokens"},
    {"allocator", "allocator.name"},
    {"block-size", "allocator.block_size"},
    {"mem-util", "memory.mem_util"},
    {"kv-capacity-tokens", "memory.kv_capacity_tokens"},
    {"max-len", "max_len"},
    {"weight-dtype", "weight_dtype"},
    {"kv-dtype", "kv_dtype"},
    {"workload", "workload"},
    {"arrival", "workload.arrival.process"},
    {"rate", "workload.arrival.rate_per_s"},
    {"num-requests", "workload.num_requests"},
    {"duration", "workload.duration_s"},
    {"time-scale", "workload.trace.time_scale"},
    {"seed", "seed"},
    {"slo-ttft", "slo.ttft_s"},
    {"slo-tpot", "slo.tpot_s"},
};

// The flag's value as it should appear in the JSON document: strings quoted, numbers bare.
// --rate stays raw text, so "4" becomes a number and "inf" the string the workload accepts.
std::string json_text(const std::string& flag, const po::variable_value& value) {
  const auto& any = value.value();
  if (flag == "rate") return value.as<std::string>();
  if (any.type() == typeid(std::string)) return nlohmann::json(value.as<std::string>()).dump();
  if (any.type() == typeid(std::int64_t)) return std::to_string(value.as<std::int64_t>());
  if (any.type() == typeid(double)) return nlohmann::json(value.as<double>()).dump();
  throw InvariantError("run: unexpected option type");
}

ConfigSources sources_from(const po::variables_map& vm) {
  ConfigSources sources;
  if (vm.count("config") != 0) sources.config_file = vm["config"].as<std::string>();
  for (const auto& [flag, key] : kFlagKeys) {
    if (vm.count(flag) != 0 && !vm[flag].defaulted()) {
      sources.overrides.push_back(
          {std::string("--") + flag, std::string(key) + "=" + json_text(flag, vm[flag])});
    }
  }
  const bool prompt = vm.count("prompt-tokens") != 0;
  const bool output = vm.count("output-tokens") != 0;
  if (prompt != output) {
    throw UsageError("--prompt-tokens and --output-tokens go together (fixed lengths)");
  }
  if (prompt) {
    const nlohmann::json lengths = {
        {"distribution", "independent"},
        {"prompt", {{"distribution", "fixed"}, {"tokens", vm["prompt-tokens"].as<std::int64_t>()}}},
        {"output",
         {{"distribution", "fixed"}, {"tokens", vm["output-tokens"].as<std::int64_t>()}}}};
    sources.overrides.push_back({"--prompt-tokens", "workload.lengths=" + lengths.dump()});
  }
  if (vm.count("set") != 0) {
    for (const auto& assignment : vm["set"].as<std::vector<std::string>>()) {
      sources.overrides.push_back({"--set", assignment});
    }
  }
  return sources;
}

void write_run(const SimulationOutcome& outcome, const std::filesystem::path& dir) {
  JsonReporter().write(outcome.result, dir);
  CsvReporter().write(outcome.result, dir);
  const auto path = dir / "resolved_config.json";
  std::ofstream out = open_output_file(path);
  out << outcome.resolved_config.dump(2) << '\n';
  close_output_file(out, path);
}

}  // namespace

int run_run(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()(
      "config", po::value<std::string>()->value_name("FILE"),
      "JSON run configuration (keys as in resolved_config.json; unknown keys are errors)")(
      "set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
      "override one configuration key, e.g. workload.arrival.cv=4 (repeatable; applied last)")(
      "model", po::value<std::string>()->value_name("NAME|PATH"), "model (default llama-3-8b)")(
      "hw", po::value<std::string>()->value_name("NAME|PATH"),
      "hardware profile (default h100-sxm)")("tp", po::value<std::int64_t>()->value_name("T"),
                                             "tensor-parallel GPUs per replica (default 1)")(
      "pp", po::value<std::int64_t>()->value_name("P"), "pipeline stages per replica (default 1)")(
      "replicas", po::value<std::int64_t>()->value_name("N"), "model replicas (default 1)")(
      "router", po::value<std::string>()->value_name("NAME"),
      "round_robin (default), least_outstanding, least_kv or random")(
      "scheduler", po::value<std::string>()->value_name("NAME"), "batch scheduler (default vllm)")(
      "max-num-seqs", po::value<std::int64_t>()->value_name("N"),
      "running requests per replica at most (default 256)")(
      "max-batched-tokens", po::value<std::int64_t>()->value_name("TOKENS"),
      "tokens per iteration at most (default 8192)")(
      "allocator", po::value<std::string>()->value_name("NAME"), "KV allocator (default paged)")(
      "block-size", po::value<std::int64_t>()->value_name("TOKENS"),
      "paged KV block size (default 16)")("mem-util", po::value<double>()->value_name("F"),
                                          "share of GPU memory the engine may use (default 0.9)")(
      "kv-capacity-tokens", po::value<std::int64_t>()->value_name("TOKENS"),
      "KV capacity per replica, overriding the computed one")(
      "max-len", po::value<std::int64_t>()->value_name("TOKENS"),
      "maximum prompt + output tokens (default the model's max_position_embeddings)")(
      "weight-dtype", po::value<std::string>()->value_name("DTYPE"),
      "weight format (default auto)")("kv-dtype", po::value<std::string>()->value_name("DTYPE"),
                                      "KV-cache format (default auto)")(
      "workload", po::value<std::string>()->value_name("NAME|PATH"),
      "workload preset from workloads/ or a JSON file (default sharegpt at 8 req/s, 2,000 "
      "requests)")("arrival", po::value<std::string>()->value_name("PROCESS"),
                   "poisson, gamma, constant, closed_loop or trace")(
      "rate", po::value<std::string>()->value_name("REQ_PER_S"),
      "mean arrival rate, requests/s; inf sends everything at time 0")(
      "num-requests", po::value<std::int64_t>()->value_name("N"), "stop after N requests")(
      "duration", po::value<double>()->value_name("SECONDS"), "no arrivals after this time")(
      "time-scale", po::value<double>()->value_name("F"),
      "trace replay: multiply arrival times by F (2 = half the rate)")(
      "prompt-tokens", po::value<std::int64_t>()->value_name("N"),
      "fixed prompt length (with --output-tokens)")("output-tokens",
                                                    po::value<std::int64_t>()->value_name("M"),
                                                    "fixed output length (with --prompt-tokens)")(
      "seed", po::value<std::int64_t>()->value_name("N"), "random seed (default 0)")(
      "slo-ttft", po::value<double>()->value_name("SECONDS"), "TTFT target for slo_attainment")(
      "slo-tpot", po::value<double>()->value_name("SECONDS"), "TPOT target for slo_attainment")(
      "out", po::value<std::string>()->value_name("DIR"),
      "write summary.json, requests.csv, iterations.csv and resolved_config.json here")(
      "json", "print summary.json to stdout instead of the table");
  const auto vm = parse_options(
      context, options, "servesim run [options]",
      "Simulates serving a workload on replicas of a model and reports TTFT, TPOT, ITL, E2E\n"
      "latency and throughput. With no options: Llama-3-8B on one H100, the sharegpt preset,\n"
      "Poisson at 8 req/s, 2,000 requests.\n"
      "Example: servesim run --model llama-2-70b --hw a100-80gb --tp 4 --rate 2 --out out/");
  if (!vm) return 0;

  const ConfigSources sources = sources_from(*vm);
  nlohmann::json document = assemble_config(sources, context.data_root);
  const SimulationOutcome outcome =
      run_simulation(document, context.data_root, std::filesystem::current_path());

  if (vm->count("out") != 0) {
    const std::filesystem::path out_dir = (*vm)["out"].as<std::string>();
    publish_output(out_dir,
                   [&](const std::filesystem::path& staging) { write_run(outcome, staging); });
  }
  if (vm->count("json") != 0) {
    context.out << summary_to_json(outcome.result.summary).dump(2) << '\n';
  } else {
    print_summary(context.out, outcome.result.summary);
    context.out << "Simulated " << outcome.stats.events << " events; KV capacity "
                << outcome.kv_capacity_tokens_per_replica << " tokens per replica.\n";
    if (vm->count("out") != 0) {
      context.out << "Wrote " << (*vm)["out"].as<std::string>() << "/{summary.json, requests.csv, "
                  << "iterations.csv, resolved_config.json}\n";
    }
  }
  return 0;
}

}  // namespace servesim::cli
