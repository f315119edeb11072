#include <filesystem>

#include <nlohmann/json.hpp>

#include "sim/app/config_assembly.h"
#include "sim/app/output_directory.h"
#include "sim/app/run_outputs.h"
#include "sim/app/simulation.h"
#include "sim/cli/run_options.h"
#include "sim/metrics/impl/console_reporter.h"
#include "sim/metrics/summary_json.h"
#include "sim/study/run_plots.h"

namespace servesim::cli {

int run_run(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  add_run_options(options);
  options.add_options()("out", po::value<std::string>()->value_name("DIR"),
                        "write summary.json, requests.csv, iterations.csv and "
                        "resolved_config.json here")(
      "json", "print summary.json to stdout instead of the table")(
      "no-plots",
      "with --out: skip the PNG/SVG plots (TTFT/TPOT CDFs, KV memory and batch "
      "size over time)");
  const auto vm = parse_options(
      context, options, "servesim run [options]",
      "Simulates serving a workload on replicas of a model and reports TTFT, TPOT, ITL, E2E\n"
      "latency and throughput. With no options: Llama-3-8B on one H100, the sharegpt preset,\n"
      "Poisson at 8 req/s, 2,000 requests.\n"
      "DTYPE (--weight-dtype, --kv-dtype): auto (the model's dtype), fp32, bf16, fp16, fp8, int8\n"
      "or int4; fp32 is not a KV format.\n"
      "Example: servesim run --model llama-2-70b --hw a100-80gb --tp 4 --rate 2 --out out/");
  if (!vm) return 0;

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
                  << (kept.keep_request_records ? "requests.csv, " : "")
                  << (kept.keep_iteration_records ? "iterations.csv, " : "")
                  << "resolved_config.json" << (vm->count("no-plots") == 0 ? ", plots" : "")
                  << "}\n";
    }
  }
  return 0;
}

}  // namespace servesim::cli
