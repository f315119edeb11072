#include <charconv>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/run_options.h"
#include "sim/core/error.h"
#include "sim/metrics/impl/console_reporter.h"
#include "sim/metrics/output_file.h"
#include "sim/metrics/summary_json.h"
#include "sim/metrics/vllm_result.h"
#include "sim/study/run_plots.h"

namespace servesim::cli {
namespace {

// --metric-percentiles "25,50,99.9": percentiles in [0, 100], as vllm bench serve takes them.
std::vector<double> metric_percentiles(const std::string& text) {
  std::vector<double> percentiles;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    double p = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), p);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() ||
        !(p >= 0 && p <= 100)) {
      throw InputError("--metric-percentiles",
                       "\"" + std::string(item) +
                           "\" is not a percentile in [0, 100] (expected a comma-separated list "
                           "such as 25,50,99.9)");
    }
    percentiles.push_back(p);
    if (comma == std::string_view::npos) return percentiles;
    rest.remove_prefix(comma + 1);
  }
}

// The setup keys vllm bench serve saves before its metrics, as far as a simulation has them.
nlohmann::json vllm_setup(const SimulationOutcome& outcome) {
  const nlohmann::json& config = outcome.resolved_config;
  const nlohmann::json& arrival = config["workload"]["arrival"];
  nlohmann::json setup = {{"backend", "servesim"},
                          {"model_id", config["model"]},
                          {"num_prompts", outcome.result.summary.requests_completed +
                                              outcome.result.summary.requests_rejected},
                          {"request_rate", nullptr},
                          {"burstiness", nullptr},
                          {"max_concurrency", nullptr}};
  const std::string process = arrival.value("process", "");
  if (process == "poisson" || process == "gamma" || process == "constant") {
    setup["request_rate"] = arrival["rate_per_s"];
  }
  // vLLM's burstiness is the shape of its gamma gaps: 1 / cv^2.
  if (process == "poisson") setup["burstiness"] = 1.0;
  if (process == "gamma") setup["burstiness"] = 1 / std::pow(arrival["cv"].get<double>(), 2);
  return setup;
}

}  // namespace

int run_run(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  add_run_options(options);
  options.add_options()("out", po::value<std::string>()->value_name("DIR"),
                        "write summary.json, requests.csv, requests.jsonl, iterations.csv "
                        "and resolved_config.json here")(
      "json", "print summary.json to stdout instead of the table")(
      "no-plots",
      "with --out: skip the PNG/SVG plots (TTFT/TPOT CDFs, KV memory and batch "
      "size over time)")("save-result", po::value<std::string>()->value_name("FILE.json"),
                         "write vLLM's `vllm bench serve --save-result` keys and units (ms) "
                         "here, agreeing with summary.json")(
      "metric-percentiles", po::value<std::string>()->value_name("LIST")->default_value("99"),
      "percentiles for --save-result beyond p90, p95 and p99, as vLLM's flag (e.g. 25,50,99.9)");
  const auto vm = parse_options(
      context, options, "servesim run [options]",
      "Simulates serving a workload on replicas of a model and reports TTFT, TPOT, ITL, E2E\n"
      "latency and throughput. With no options: Llama-3-8B on one H100, the sharegpt preset,\n"
      "Poisson at 8 req/s, 2,000 requests.\n"
      "DTYPE (--weight-dtype, --kv-dtype): auto (the model's dtype), fp32, bf16, fp16, fp8, int8\n"
      "or int4; fp32 is not a KV format. vLLM's engine and benchmark flags work under their\n"
      "names too (below), each the same run as the servesim flag it names.\n"
      "Example: servesim run --model llama-2-70b --hw a100-80gb --tp 4 --rate 2 --out out/");
  if (!vm) return 0;

  const std::vector<double> percentiles =
      metric_percentiles((*vm)["metric-percentiles"].as<std::string>());
  const ConfigSources sources = run_config_sources(*vm);
  nlohmann::json document = assemble_config(sources, context.data_root);
  const SimulationOutcome outcome =
      run_simulation(document, context.data_root, std::filesystem::current_path());
  require_served(outcome.result);

  if (vm->count("out") != 0) {
    const std::filesystem::path out_dir = (*vm)["out"].as<std::string>();
    publish_output(out_dir, [&](const std::filesystem::path& staging) {
      write_run_outputs(outcome, staging);
      if (vm->count("no-plots") == 0) {
        render_figures(staging, write_run_figures(staging), context.err);
      }
    });
  }
  if (vm->count("save-result") != 0) {
    const std::filesystem::path path = (*vm)["save-result"].as<std::string>();
    nlohmann::json result = vllm_setup(outcome);
    result.update(vllm_bench_result(outcome.result.summary, outcome.result.collector, percentiles));
    auto out = open_output_file(path);
    out << result.dump(2) << '\n';
    close_output_file(out, path);
  }
  if (vm->count("json") != 0) {
    context.out << summary_to_json(outcome.result.summary).dump(2) << '\n';
  } else {
    print_summary(context.out, outcome.result.summary,
                  outcome.result.collector.rejections_by_reason());
    context.out << "Simulated " << outcome.stats.events << " events; KV capacity "
                << outcome.kv_capacity_tokens_per_replica << " tokens per replica.\n";
    if (vm->count("out") != 0) {
      // The record files are written only when their records were kept.
      const MetricsOptions& kept = outcome.result.collector.options();
      context.out << "Wrote " << (*vm)["out"].as<std::string>() << "/{summary.json, "
                  << (kept.keep_request_records ? "requests.csv, requests.jsonl, " : "")
                  << (kept.keep_iteration_records ? "iterations.csv, " : "")
                  << "resolved_config.json" << (vm->count("no-plots") == 0 ? ", plots" : "")
                  << "}\n";
    }
  }
  return 0;
}

}  // namespace servesim::cli
