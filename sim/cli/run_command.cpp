#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/band_report.h"
#include "sim/cli/run_options.h"
#include "sim/cli/serving_options.h"
#include "sim/core/error.h"
#include "sim/metrics/impl/console_reporter.h"
#include "sim/metrics/impl/csv_reporter.h"
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

// --percentile-metrics "ttft,tpot,itl": the names, checked by vllm_bench_result.
std::vector<std::string> percentile_metrics(const std::string& text) {
  std::vector<std::string> names;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    names.emplace_back(rest.substr(0, comma));
    const std::string& name = names.back();
    if (name != "ttft" && name != "tpot" && name != "itl" && name != "e2el") {
      throw InputError("--percentile-metrics",
                       "unknown metric \"" + name +
                           "\" (expected a comma-separated list of ttft, tpot, itl and e2el)");
    }
    if (comma == std::string_view::npos) return names;
    rest.remove_prefix(comma + 1);
  }
}

// vLLM's "date" key, %Y%m%d-%H%M%S in UTC: the time of writing, or SOURCE_DATE_EPOCH's when
// set (reproducible files, as the reproducible-builds convention has it).
std::string result_date() {
  std::time_t now = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr) {
    long long seconds = 0;
    const std::string_view text = epoch;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (error != std::errc() || end != text.data() + text.size() || seconds < 0) {
      throw InputError("SOURCE_DATE_EPOCH",
                       "expected seconds since 1970, got \"" + std::string(text) + "\"");
    }
    now = static_cast<std::time_t>(seconds);
  }
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> buffer{};
  const std::size_t length = std::strftime(buffer.data(), buffer.size(), "%Y%m%d-%H%M%S", &utc);
  return std::string(buffer.data(), length);
}

// The setup keys vllm bench serve saves before its metrics, as far as a simulation has them.
nlohmann::json vllm_setup(const SimulationOutcome& outcome, const po::variables_map& vm) {
  const nlohmann::json& config = outcome.resolved_config;
  const nlohmann::json& arrival = config["workload"]["arrival"];
  const auto text_or_null = [&vm](const char* flag) {
    return vm.count(flag) != 0 ? nlohmann::json(vm[flag].as<std::string>()) : nlohmann::json();
  };
  nlohmann::json setup = {{"date", result_date()},
                          {"endpoint_type", "servesim"},
                          {"backend", "servesim"},
                          {"label", text_or_null("label")},
                          {"model_id", config["model"]},
                          {"tokenizer_id", vm.count("tokenizer") != 0
                                               ? nlohmann::json(vm["tokenizer"].as<std::string>())
                                               : config["model"]},
                          {"num_prompts", outcome.result.summary.requests_completed +
                                              outcome.result.summary.requests_rejected},
                          {"request_rate", nullptr},
                          {"burstiness", nullptr},
                          {"max_concurrency", arrival.value("max_concurrency", nlohmann::json())}};
  const std::string process = arrival.value("process", "");
  if (process == "poisson" || process == "gamma" || process == "constant") {
    setup["request_rate"] = arrival["rate_per_s"];
  }
  // vLLM's burstiness is the shape of its gamma gaps: 1 / cv^2.
  if (process == "poisson") setup["burstiness"] = 1.0;
  if (process == "gamma") setup["burstiness"] = 1 / std::pow(arrival["cv"].get<double>(), 2);
  return setup;
}

// run's own flags, beside the run options every simulating command shares.
void add_run_command_options(po::options_description& options) {
  add_run_options(options);
  add_plot_format_option(options);
  options.add_options()("out", po::value<std::string>()->value_name("DIR"),
                        "write summary.json, requests.csv, iterations.csv, "
                        "resolved_config.json and plots here")(
      "requests-jsonl",
      "with --out: also write requests.jsonl (requests.csv's rows as JSON "
      "lines)")("json", "print summary.json to stdout instead of the table")(
      "no-plots",
      "with --out: skip the plots (TTFT/TPOT CDFs, KV memory and batch "
      "size over time)")("save-result", po::value<std::string>()->value_name("FILE.json"),
                         "write vLLM's `vllm bench serve --save-result` keys and units (ms) "
                         "here, agreeing with summary.json")(
      "metric-percentiles", po::value<std::string>()->value_name("LIST")->default_value("99"),
      "--save-result: the percentiles of each metric, as vLLM's flag (e.g. 25,50,99.9)")(
      "percentile-metrics",
      po::value<std::string>()->value_name("LIST")->default_value("ttft,tpot,itl"),
      "--save-result: the metrics given mean, median, std and percentiles, of ttft, tpot, "
      "itl and e2el, as vLLM's flag")("save-detailed",
                                      "--save-result: add vLLM's per-request lists (input_lens, "
                                      "output_lens, ttfts, latencies, ...)")(
      "label", po::value<std::string>()->value_name("TEXT"), "--save-result: vLLM's label key")(
      "tokenizer", po::value<std::string>()->value_name("NAME"),
      "--save-result: vLLM's tokenizer_id key (default: the model)");
}

// What --save-result writes, from its flags; the flags that only it reads are refused without
// it.
VllmResultOptions vllm_result_options(const po::variables_map& vm) {
  VllmResultOptions result_options;
  result_options.percentiles = metric_percentiles(vm["metric-percentiles"].as<std::string>());
  result_options.metrics = percentile_metrics(vm["percentile-metrics"].as<std::string>());
  result_options.detailed = vm.count("save-detailed") != 0;
  if (vm.count("save-result") == 0) {
    for (const char* flag : {"save-detailed", "label", "tokenizer"}) {
      if (vm.count(flag) != 0)
        throw UsageError("--" + std::string(flag) + ": only with --save-result");
    }
  }
  return result_options;
}

// The summary table (or summary.json with --json) and, with --out, the files written.
void print_run_report(CommandContext& context, const SimulationOutcome& outcome,
                      const po::variables_map& vm) {
  if (vm.count("json") != 0) {
    context.out << outcome_summary_json(outcome).dump(2) << '\n';
    return;
  }
  print_summary(context.out, outcome.result.summary,
                outcome.result.collector.rejections_by_reason());
  print_error_bands(context.out, outcome_summary_json(outcome));
  context.out << "Simulated " << outcome.stats.events << " events; KV capacity "
              << outcome.kv_capacity_tokens_per_replica << " tokens per replica.\n";
  if (vm.count("out") == 0) return;
  // The record files are written only for the records the configuration reports.
  const nlohmann::json& output = outcome.resolved_config.at("output");
  const bool requests = output.at("request_records").get<bool>();
  const bool iterations = output.at("iteration_records").get<bool>();
  context.out << "Wrote " << vm["out"].as<std::string>() << "/{summary.json, "
              << (requests ? "requests.csv, " : "")
              << (requests && vm.count("requests-jsonl") != 0 ? "requests.jsonl, " : "")
              << (iterations ? "iterations.csv, " : "") << "resolved_config.json"
              << (vm.count("no-plots") == 0 ? ", plots" : "") << "}\n";
}

}  // namespace

int run_run(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  add_run_command_options(options);
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
  const PlotFormats plot_formats = plot_formats_from(*vm);

  const VllmResultOptions result_options = vllm_result_options(*vm);
  if (vm->count("requests-jsonl") != 0 && vm->count("out") == 0)
    throw UsageError("--requests-jsonl: only with --out");
  // Where the outputs go is checked before anything runs: a run refused at the end would
  // have been simulated for nothing.
  if (vm->count("out") != 0) output_folder((*vm)["out"].as<std::string>());
  if (vm->count("save-result") != 0)
    check_output_file("--save-result", (*vm)["save-result"].as<std::string>());
  const ConfigSources sources = run_config_sources(*vm);
  nlohmann::json document = assemble_config(sources, context.data_root);
  if (const auto warning = platform_warning(document, context.data_root)) {
    context.err << "servesim: warning: " << *warning << '\n';
  }
  // Records cost memory and time per request and per iteration (a million requests hold
  // 1.6 GB of them): --out writes its files and draws its figures as the run goes, and only
  // --save-result keeps them.
  const bool save_result = vm->count("save-result") != 0;
  const bool plots = vm->count("no-plots") == 0;
  std::optional<SimulationOutcome> outcome;
  std::optional<nlohmann::json> result;
  // The run, its check and the result file's figures, so that one the run cannot give fails
  // before --out is published.
  const auto simulate = [&](const SimulationOptions& run_options) {
    outcome.emplace(
        run_simulation(document, context.data_root, std::filesystem::current_path(), run_options));
    require_served(outcome->result);
    if (save_result) {
      result = vllm_setup(*outcome, *vm);
      result->update(
          vllm_bench_result(outcome->result.summary, outcome->result.collector, result_options));
    }
  };
  SimulationOptions keep;
  keep.keep_request_timings = false;
  keep.keep_records = save_result;
  if (vm->count("out") != 0) {
    const std::filesystem::path out_dir = (*vm)["out"].as<std::string>();
    publish_output(out_dir, [&](const std::filesystem::path& staging) {
      CsvRecordWriter writer(RecordFiles::in(staging, vm->count("requests-jsonl") != 0));
      RunFigureData figures;
      SimulationOptions streamed = keep;
      streamed.record_sinks.push_back(&writer);
      if (plots) streamed.record_sinks.push_back(&figures);
      // Ordered and written beside the simulation where a second core can take them.
      streamed.records_in_background = std::thread::hardware_concurrency() > 1;
      simulate(streamed);
      write_run_outputs(*outcome, staging, {.records = false});
      write_command_record(staging, context);
      if (plots) {
        render_figures(staging, write_run_figures(staging, figures), context.err, plot_formats);
      }
      // Last, so that a result file that cannot be written leaves the previous --out as it was.
      if (result) write_atomically((*vm)["save-result"].as<std::string>(), result->dump(2) + "\n");
    });
  } else {
    simulate(keep);
    if (result) write_atomically((*vm)["save-result"].as<std::string>(), result->dump(2) + "\n");
  }
  print_run_report(context, *outcome, *vm);
  return 0;
}

}  // namespace servesim::cli
