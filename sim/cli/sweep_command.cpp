#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/app/app.h"
#include "sim/cli/format.h"
#include "sim/cli/run_options.h"
#include "sim/cli/study_options.h"
#include "sim/core/error.h"
#include "sim/metrics/output_file.h"
#include "sim/study/grid.h"
#include "sim/study/plot_title.h"
#include "sim/study/point_simulation.h"
#include "sim/study/progress_meter.h"
#include "sim/study/same_schedule.h"
#include "sim/study/seed_replicates.h"
#include "sim/study/summary_columns.h"
#include "sim/study/sweep_plots.h"
#include "sim/study/sweep_result.h"
#include "sim/study/sweep_run.h"

namespace servesim::cli {
namespace {

// The table's `stable` cell: yes or no, or with --seeds the stable seeds of all ("2/3").
std::string stable_cell(const nlohmann::json& summary) {
  if (summary.contains("seeds") && summary.contains("steady_state") &&
      summary["steady_state"].contains("stable_seeds")) {
    return std::to_string(summary["steady_state"]["stable_seeds"].get<std::int64_t>()) + "/" +
           std::to_string(summary["seeds"].get<std::int64_t>());
  }
  return unstable(summary) ? "no" : "yes";
}

void print_sweep_table(std::ostream& out, const SweepResult& sweep) {
  std::vector<std::string> header{"point"};
  std::vector<std::size_t> text_columns;
  for (const auto& axis : sweep.axes) {
    text_columns.push_back(header.size());
    header.push_back(axis);
  }
  // req/s and tokens/s over the steady state (capacity's); run req/s over the whole run,
  // drain included.
  for (const char* column :
       {"req/s", "run req/s", "served %", "stable", "tokens/s", "norm ms/tok", "TTFT p50 ms",
        "TTFT p99 ms", "TPOT p99 ms", "ITL p50 ms", "ITL p99 ms", "preempted"}) {
    header.emplace_back(column);
  }
  // A point that does not fit has no figures, only the reason, in a last column.
  bool any_unfit = false;
  for (const auto& row : sweep.rows)
    any_unfit = any_unfit || does_not_fit(row.summary);
  if (any_unfit) {
    text_columns.push_back(header.size());
    header.emplace_back("note");
  }
  Table table(header, text_columns);
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    const auto& row = sweep.rows[i];
    std::vector<std::string> cells{std::to_string(i)};
    cells.insert(cells.end(), row.labels.begin(), row.labels.end());
    if (does_not_fit(row.summary)) {
      cells.insert(cells.end(), 12, "-");
      cells.push_back(unfit_text(row.summary));
      table.add_row(cells);
      continue;
    }
    const auto value = [&](const char* path, double scale, int decimals) {
      cells.push_back(format_fixed(summary_value(row.summary, path) * scale, decimals));
    };
    value("steady_state.throughput_requests_per_s", 1, 3);
    value("throughput_requests_per_s", 1, 3);
    value("steady_state.served_ratio", 100, 1);
    cells.emplace_back(stable_cell(row.summary));
    value("steady_state.throughput_output_tokens_per_s", 1, 0);
    value("normalized_latency_s_per_token", 1e3, 2);
    value("ttft_s.p50", 1e3, 1);
    value("ttft_s.p99", 1e3, 1);
    value("tpot_s.p99", 1e3, 2);
    value("itl_s.p50", 1e3, 2);
    value("itl_s.p99", 1e3, 2);
    value("preemptions", 1, 0);
    if (any_unfit) cells.emplace_back();
    table.add_row(cells);
  }
  table.print(out);
  std::vector<const nlohmann::json*> summaries;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    summaries.push_back(&sweep.rows[i].summary);
    names.push_back("point " + std::to_string(i));
  }
  out << same_schedule_note(same_schedule_groups(summaries), names);
}

// Writes a sweep's files (and renders its plots) into `dir`.
// The curves' options and title travel in summary.json ("plot"), so `servesim plot` redraws
// the same figure. Returns what the folder holds of the curves, for the closing line: ""
// without a load axis.
std::string write_sweep_outputs(const SweepResult& sweep, const SweepResult* per_seed,
                                const std::filesystem::path& dir, bool plots,
                                const PlotFormats& formats, const CurveOptions& curves,
                                std::ostream& warnings) {
  write_sweep_csv(sweep, dir / "sweep.csv");
  if (per_seed) write_sweep_csv(*per_seed, dir / "sweep_seeds.csv");
  const auto json_path = dir / "summary.json";
  auto out = open_output_file(json_path);
  nlohmann::json document = sweep_to_json(sweep);
  document["command"] = "sweep";
  document["plot"] = {{"title", curves.title},
                      {"x", curves.x == CurveX::OfferedRate ? "offered_rate" : "throughput"},
                      {"log_y", curves.force_log_y}};
  out << document.dump(2) << '\n';
  close_output_file(out, json_path);
  const auto figure = write_curve_figure(sweep, dir, curves);
  if (!figure) return "";
  if (plots && render_figures(dir, {*figure}, warnings, formats)) {
    std::string files;
    for (const PlotFormat format : formats)
      files += std::string(", latency_throughput.") + plot_format_extension(format);
    return files;
  }
  return ", curves.dat, latency_throughput.gp (not rendered)";
}

// sweep's own flags, beside the run options and the study flags (-j, --resume).
void add_sweep_options(po::options_description& options) {
  options.add_options()("grid", po::value<std::vector<std::string>>()->value_name("KEY=V1,V2,..."),
                        "one axis of the grid (repeatable): a configuration key or a run flag's "
                        "name (rate, hw, tp, scheduler, block-size, ...), or policy=SCHED:ALLOC")(
      "grid-file", po::value<std::string>()->value_name("FILE"),
      "axes from a JSON file: {\"grid\": [{\"key\": \"rate\", \"values\": [1, 2]}, ...]}")(
      "out", po::value<std::string>()->value_name("DIR"),
      "write sweep.csv, summary.json and plots (latency_throughput.svg) here")(
      "no-plots", "write the plot data and gnuplot scripts but do not render them")(
      "x", po::value<std::string>()->value_name("AXIS")->default_value("throughput"),
      "x axis of the latency curves: throughput (achieved req/s) or offered_rate (the rate "
      "axis)")("log-y",
               "log y axes on every curve panel (else only on a panel whose values span > 30x)")(
      "json", "print the sweep's summary.json to stdout instead of the table")(
      "seeds", po::value<std::int64_t>()->value_name("N"),
      "run every point with N seeds (the run's seed and the N - 1 after it): sweep.csv holds "
      "each metric's mean and the half-width of its 95% confidence interval (<metric>_ci95), "
      "the curves error bars, sweep_seeds.csv every run");
  add_jobs_option(options);
  add_resume_option(options);
  add_run_options(options);
  add_plot_format_option(options);
}

// The grid's axes: --grid-file's, then each --grid's.
std::vector<GridAxis> sweep_axes(const po::variables_map& vm) {
  std::vector<GridAxis> axes;
  if (vm.count("grid-file") != 0) axes = load_grid_file(vm["grid-file"].as<std::string>());
  if (vm.count("grid") != 0) {
    for (const auto& text : vm["grid"].as<std::vector<std::string>>())
      axes.push_back(parse_grid_flag(text));
  }
  return axes;
}

// The latency curves' title: what the base configuration holds beside the axes. A base that
// only the axes make valid (their points report for themselves) gets no title.
std::string curve_title(const ConfigSources& base, const std::vector<GridAxis>& axes,
                        const std::filesystem::path& data_root) {
  std::vector<std::string> varied;
  for (const auto& axis : axes)
    varied.push_back(axis.name);
  try {
    return plot_title(assemble_config(base, data_root), base, varied);
  } catch (const Error&) {
    return "";
  }
}

}  // namespace

int run_sweep(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  add_sweep_options(options);
  const auto vm = parse_options(
      context, options, "servesim sweep --grid KEY=V1,V2,... [--grid ...] [run options]",
      "Runs every combination of the grid's values (the last axis varying fastest), each with\n"
      "the same seed, and writes one CSV row per point with every summary metric. With a rate\n"
      "axis it draws each policy's latency/throughput curve.\n"
      "Example: servesim sweep --grid rate=2,4,8,16 \\\n"
      "  --grid policy=orca:contiguous:max,orca:paged,vllm:paged -j 2 --out sweep/");
  if (!vm) return 0;
  const PlotFormats plot_formats = plot_formats_from(*vm);

  std::vector<GridAxis> axes = sweep_axes(*vm);
  CurveOptions curves;
  curves.x = parse_curve_x((*vm)["x"].as<std::string>(), "--x");
  curves.force_log_y = vm->count("log-y") != 0;
  const ConfigSources base = run_config_sources(*vm);
  curves.title = curve_title(base, axes, context.data_root);
  const auto executor = executor_from(*vm, context);
  ProgressMeter progress(context.err, "sweep", context.terminal);
  const std::optional<std::string> out_dir = study_out_dir(*vm);
  std::optional<PointJournal> journal = study_journal(*vm, context, "sweep");
  const std::int64_t seeds = integer_flag(*vm, "seeds", 1).value_or(1);
  if (seeds > 1) {
    axes = with_seed_axis(std::move(axes),
                          assemble_config(base, context.data_root).at("seed").get<std::int64_t>(),
                          seeds);
  }
  const SweepResult per_seed =
      run_sweep(base, axes, axis_overrides, *executor, context.data_root,
                std::filesystem::current_path(), &progress, journal ? &*journal : nullptr);
  const SweepResult sweep = seeds > 1 ? fold_seed_replicates(per_seed, seeds) : per_seed;
  // Points that do not fit are rows saying why; a sweep with nothing else writes nothing.
  const bool any_fits = std::any_of(sweep.rows.begin(), sweep.rows.end(),
                                    [](const SweepRow& row) { return !does_not_fit(row.summary); });
  if (!any_fits) {
    if (journal) journal->finish();
    if (context.processes.leader()) {
      print_sweep_table(context.out, sweep);
      context.err << "servesim: error: no grid point fits (each row says why)\n";
    }
    return exit_code_for(ErrorKind::Infeasible);
  }
  if (!context.processes.leader()) return 0;
  std::string curve_files;
  if (out_dir) {
    publish_output(*out_dir, [&](const std::filesystem::path& staging) {
      curve_files =
          write_sweep_outputs(sweep, seeds > 1 ? &per_seed : nullptr, staging,
                              vm->count("no-plots") == 0, plot_formats, curves, context.err);
      write_command_record(staging, context);
    });
    if (journal) journal->finish();
  }
  if (vm->count("json") != 0) {
    nlohmann::json document = sweep_to_json(sweep);
    document["command"] = "sweep";
    context.out << document.dump(2) << '\n';
  } else {
    print_sweep_table(context.out, sweep);
    if (context.processes.size > 1) {
      context.out << "Ran " << sweep.rows.size() << " points over " << context.processes.size
                  << " MPI ranks\n";
    }
    if (out_dir) {
      context.out << "Wrote " << *out_dir << "/{sweep.csv, "
                  << (seeds > 1 ? "sweep_seeds.csv, " : "") << "summary.json, command.json"
                  << curve_files << "}\n";
    }
  }
  return 0;
}

}  // namespace servesim::cli
