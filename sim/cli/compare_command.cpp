#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/format.h"
#include "sim/cli/run_options.h"
#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/impl/csv_reporter.h"
#include "sim/metrics/output_file.h"
#include "sim/study/compare_plots.h"
#include "sim/study/plot_title.h"
#include "sim/study/point_simulation.h"
#include "sim/study/same_schedule.h"
#include "sim/study/steady_state.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {
namespace {

struct Compared {
  PolicyCombination policy;
  SimulationOutcome outcome;
  nlohmann::json summary;
};

void write_combined_csv(const std::vector<Compared>& runs, const std::filesystem::path& path) {
  auto out = open_output_file(path);
  out << "policy";
  for (const auto& [name, value] : summary_columns(runs.front().summary))
    out << ',' << name;
  out << '\n';
  for (const auto& run : runs) {
    out << csv_field(run.policy.label);
    for (const auto& [name, value] : summary_columns(run.summary))
      out << ',' << format_round_trip(value);
    out << '\n';
  }
  close_output_file(out, path);
}

void print_table(std::ostream& out, const std::vector<Compared>& runs) {
  std::vector<std::string> header{"metric"};
  for (const auto& run : runs)
    header.push_back(run.policy.label);
  Table table(header);
  const auto row = [&](const std::string& label, auto value_of) {
    std::vector<std::string> cells{label};
    for (const auto& run : runs)
      cells.push_back(value_of(run.summary));
    table.add_row(cells);
  };
  const auto number = [](const char* key, double scale, int decimals) {
    return [=](const nlohmann::json& s) {
      return format_fixed(s[key].get<double>() * scale, decimals);
    };
  };
  const auto latency = [](const char* key, const char* stat) {
    return
        [=](const nlohmann::json& s) { return format_fixed(s[key][stat].get<double>() * 1e3, 1); };
  };
  const auto share = [](const char* key) {
    return [=](const nlohmann::json& s) {
      return format_fixed(s["kv_memory"][key].get<double>() * 100, 1) + "%";
    };
  };
  row("requests completed", number("requests_completed", 1, 0));
  row("requests rejected", number("requests_rejected", 1, 0));
  // Over the steady state (capacity's and sweep's throughput), then over the whole run.
  const auto steady = [](const char* key, double scale, int decimals) {
    return [=](const nlohmann::json& s) {
      return format_fixed(s["steady_state"][key].get<double>() * scale, decimals);
    };
  };
  row("throughput (req/s)", steady("throughput_requests_per_s", 1, 3));
  row("output tokens/s", steady("throughput_output_tokens_per_s", 1, 1));
  row("served / offered (%)", steady("served_ratio", 100, 1));
  row("stable", [](const nlohmann::json& s) { return unstable(s) ? "no" : "yes"; });
  row("whole-run throughput (req/s)", number("throughput_requests_per_s", 1, 3));
  row("normalized latency (ms/token)", number("normalized_latency_s_per_token", 1e3, 2));
  for (const char* metric : {"ttft_s", "tpot_s", "e2e_s"}) {
    const std::string name = std::string(metric).substr(0, std::string(metric).size() - 2);
    for (const char* stat : {"p50", "p90", "p99"}) {
      row(name + " " + stat + " (ms)", latency(metric, stat));
    }
  }
  row("mean batched requests", number("mean_batch_size", 1, 2));
  row("KV token states", share("token_states"));
  row("KV reserved", share("reserved"));
  row("KV internal fragmentation", share("internal_fragmentation"));
  row("KV external fragmentation", share("external_fragmentation"));
  row("KV free", share("free"));
  row("KV cached (prefix cache)", share("cached"));
  row("prefix-cache hit rate (%)", number("prefix_cache_hit_rate", 100, 1));
  row("preemptions", number("preemptions", 1, 0));
  table.print(out);
}

// A folder name for a policy label: "orca:contiguous:max" -> "orca-contiguous-max".
std::string folder_for(const std::string& label) {
  std::string folder = label;
  for (char& c : folder) {
    if (c == ':' || c == '/' || c == ' ') c = '-';
  }
  return folder;
}

// The policies' runs, in order, and those that cannot serve the run.
struct ComparedPolicies {
  std::vector<Compared> runs;
  // A policy that cannot serve the run (its reservation exceeds the KV capacity, every request
  // rejected) is reported with its reason; the others are compared. None served: the error.
  std::vector<std::pair<std::string, nlohmann::json>> not_fitting;  // label, its unfit result
  std::string title;  // the policies share model, hardware, engine and workload
};

// One policy's run of `document`; with `folder`, its requests.csv and iterations.csv are
// written there as it goes.
Compared run_compared_policy(const PolicyCombination& policy, const nlohmann::json& document,
                             const CommandContext& context, const std::filesystem::path* folder) {
  SimulationOptions run_options;
  run_options.keep_records = false;
  std::optional<CsvRecordWriter> writer;
  if (folder != nullptr) {
    writer.emplace(RecordFiles::in(*folder, false));
    run_options.record_sinks.push_back(&*writer);
    run_options.records_in_background = std::thread::hardware_concurrency() > 1;
  }
  SimulationOutcome outcome =
      run_simulation(document, context.data_root, std::filesystem::current_path(), run_options);
  require_served(outcome.result);
  nlohmann::json summary = outcome_summary_json(outcome);
  summary["steady_state"] =
      steady_state_json(analyze_steady_state(outcome.result.collector.request_timings()));
  return {policy, std::move(outcome), std::move(summary)};
}

// Every policy's run; with `staging`, each writes its requests.csv and iterations.csv into
// its folder there as it goes, so that no run keeps its records.
void run_compared_policies(const std::vector<PolicyCombination>& policies,
                           const ConfigSources& base, const CommandContext& context,
                           const std::filesystem::path* staging, ComparedPolicies& compared) {
  for (const auto& policy : policies) {
    ConfigSources sources = base;
    sources.overrides.insert(sources.overrides.end(), policy.overrides.begin(),
                             policy.overrides.end());
    const nlohmann::json document = assemble_config(sources, context.data_root);
    if (compared.title.empty()) compared.title = plot_title(document, sources);
    const std::filesystem::path folder =
        staging != nullptr ? *staging / folder_for(policy.label) : std::filesystem::path();
    try {
      compared.runs.push_back(
          run_compared_policy(policy, document, context, staging != nullptr ? &folder : nullptr));
    } catch (const InfeasibleError& e) {
      if (policies.size() == 1) throw;
      compared.not_fitting.emplace_back(policy.label, unfit_result(e));
      if (staging != nullptr) std::filesystem::remove_all(folder);
    }
  }
  if (compared.runs.empty()) {
    throw InfeasibleError("no policy fits: " + compared.not_fitting.front().first + ": " +
                          unfit_text(compared.not_fitting.front().second));
  }
}

// {policy: summary.json}, the unfit results included.
nlohmann::json combined_summaries(const ComparedPolicies& compared) {
  nlohmann::json combined = nlohmann::json::object();
  for (const auto& run : compared.runs)
    combined[run.policy.label] = run.summary;
  for (const auto& [label, unfit] : compared.not_fitting)
    combined[label] = unfit;
  return combined;
}

// --out: each policy's run in its folder, compare.csv, command.json, summary.json and the
// comparison's figures.
void write_compare_outputs(const std::filesystem::path& staging, const ComparedPolicies& compared,
                           const CommandContext& context, bool plots,
                           const PlotFormats& plot_formats) {
  std::vector<ComparedSummary> summaries;
  for (const auto& run : compared.runs) {
    write_run_outputs(run.outcome, staging / folder_for(run.policy.label),
                      {.requests_jsonl = false, .records = false});
    summaries.push_back({run.policy.label, run.summary});
  }
  write_combined_csv(compared.runs, staging / "compare.csv");
  write_command_record(staging, context);
  const auto marker = staging / "summary.json";  // marks the folder as servesim output
  auto out = open_output_file(marker);
  out << combined_summaries(compared).dump(2) << '\n';
  close_output_file(out, marker);
  if (plots)
    render_figures(staging, write_compare_figures(summaries, staging, compared.title), context.err,
                   plot_formats);
}

// The table, which policies ran the same schedule, and why the others could not serve.
void print_comparison(std::ostream& out, const ComparedPolicies& compared) {
  print_table(out, compared.runs);
  std::vector<const nlohmann::json*> summaries;
  std::vector<std::string> labels;
  for (const auto& run : compared.runs) {
    summaries.push_back(&run.summary);
    labels.push_back(run.policy.label);
  }
  out << same_schedule_note(same_schedule_groups(summaries), labels);
  for (const auto& [label, unfit] : compared.not_fitting)
    out << label << ": " << unfit_text(unfit) << '\n';
}

}  // namespace

int run_compare(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("policies", po::value<std::string>()->value_name("LIST")->required(),
                        "comma-separated SCHEDULER:ALLOCATOR[:PARAM[:PLACEMENT]] combinations, "
                        "e.g. orca:contiguous:max,vllm:paged:16");
  add_run_options(options);
  add_plot_format_option(options);
  options.add_options()("out", po::value<std::string>()->value_name("DIR"),
                        "write one folder per combination, compare.csv and the comparison's "
                        "plots (kv_breakdown, latency_bars .svg) here")(
      "json", "print {policy: summary.json} to stdout instead of the table")(
      "no-plots",
      "with --out: write no plots, scripts or plot data (`servesim plot DIR` draws "
      "each policy's run too)");
  const auto vm = parse_options(
      context, options, "servesim compare --policies LIST [run options]",
      "Runs the same requests (same seed: identical arrivals and lengths) through several\n"
      "scheduler and KV-allocator combinations and prints them side by side. With --out it\n"
      "draws the KV memory breakdown per policy (stacked bars) and the mean latencies.\n"
      "Example: servesim compare --config workloads/scenarios/vllm-paper-opt13b.json \\\n"
      "  --policies orca:contiguous:max,orca:contiguous:pow2,orca:contiguous:oracle,vllm:paged:16");
  if (!vm) return 0;
  const PlotFormats plot_formats = plot_formats_from(*vm);

  const auto policies = parse_policy_list((*vm)["policies"].as<std::string>());
  const ConfigSources base = run_config_sources(*vm);
  const bool plots = vm->count("no-plots") == 0;
  ComparedPolicies compared;
  if (vm->count("out") != 0) {
    publish_output((*vm)["out"].as<std::string>(), [&](const std::filesystem::path& staging) {
      run_compared_policies(policies, base, context, &staging, compared);
      write_compare_outputs(staging, compared, context, plots, plot_formats);
    });
  } else {
    run_compared_policies(policies, base, context, nullptr, compared);
  }
  if (vm->count("json") != 0) {
    context.out << combined_summaries(compared).dump(2) << '\n';
  } else {
    print_comparison(context.out, compared);
  }
  return 0;
}

}  // namespace servesim::cli
