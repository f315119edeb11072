#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/app.h"
#include "sim/cli/format.h"
#include "sim/cli/run_options.h"
#include "sim/cli/study_options.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/study/point_simulation.h"
#include "sim/study/progress_meter.h"
#include "sim/study/rate_search.h"
#include "sim/study/replica_search.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {
namespace {

// What a capacity study shares between its modes.
struct Study {
  const CommandContext& context;
  ConfigSources base;
  SloTarget slo;
  IPointExecutor& executor;
  ProgressMeter& progress;

  // Runs one round of points, each the base configuration plus its overrides.
  std::vector<nlohmann::json> run(const std::vector<std::vector<ConfigOverride>>& overrides,
                                  const std::vector<std::string>& names) {
    return simulate_points(base, overrides, names, executor, context.data_root,
                           std::filesystem::current_path(), &progress, /*steady_state=*/true);
  }
};

std::string rate_text(double rate_per_s) {
  return format_9_digits(rate_per_s);
}

ConfigOverride rate_override(double rate_per_s) {
  return {"capacity", "workload.arrival.rate_per_s=" + nlohmann::json(rate_per_s).dump()};
}

nlohmann::json verdict_json(const SloVerdict& verdict) {
  return {{"met", verdict.met}, {"violations", verdict.violations}};
}

std::string violations_text(const SloVerdict& verdict) {
  std::string text;
  for (const auto& v : verdict.violations)
    text += (text.empty() ? "" : "; ") + v;
  return text.empty() ? "-" : text;
}

nlohmann::json slo_json(const SloTarget& slo) {
  nlohmann::json terms = nlohmann::json::array();
  for (const auto& limit : slo.limits)
    terms.push_back(limit.text());
  if (slo.attainment) terms.push_back("attainment >= " + format_9_digits(*slo.attainment));
  return terms;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  auto out = open_output_file(path);
  out << text;
  close_output_file(out, path);
}

// capacity.csv: the points evaluated, in order, with their key metrics (empty cells for a
// point that does not fit; its violations say why).
std::string points_csv(const std::vector<std::string>& keys,
                       const std::vector<std::vector<std::string>>& key_cells,
                       const std::vector<const nlohmann::json*>& summaries,
                       const std::vector<const SloVerdict*>& verdicts) {
  std::ostringstream out;
  std::vector<std::string> metrics;
  std::vector<std::map<std::string, double>> values;
  for (const nlohmann::json* summary : summaries) {
    auto& point = values.emplace_back();
    for (const auto& [name, value] : summary_columns(*summary)) {
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
      point[name] = value;
    }
  }
  for (const auto& name : keys)
    out << name << ',';
  out << "met,violations";
  for (const auto& m : metrics)
    out << ',' << m;
  out << '\n';
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    for (const auto& cell : key_cells[i])
      out << csv_field(cell) << ',';
    out << (verdicts[i]->met ? 1 : 0) << ',' << csv_field(violations_text(*verdicts[i]));
    for (const auto& m : metrics) {
      out << ',';
      if (const auto it = values[i].find(m); it != values[i].end()) {
        out << format_round_trip(it->second);
      }
    }
    out << '\n';
  }
  return out.str();
}

// Writes capacity.csv and summary.json into --out, when it is given.
void publish_capacity(const po::variables_map& vm, const std::string& csv,
                      const nlohmann::json& document) {
  if (vm.count("out") == 0) return;
  publish_output(vm["out"].as<std::string>(), [&](const std::filesystem::path& staging) {
    write_text(staging / "capacity.csv", csv);
    write_text(staging / "summary.json", document.dump(2) + "\n");
  });
}

// The req/s column is the steady-state throughput (requests completing between the end of
// the warm-up and the last arrival, per second), not the whole run's, whose drain after the
// last arrival lasts as long as the longest request.
void add_point_cells(std::vector<std::string>& cells, const nlohmann::json& summary,
                     const SloVerdict& verdict) {
  if (does_not_fit(summary)) {
    cells.insert(cells.end(), {"-", "-", "-", "-", "no", violations_text(verdict)});
    return;
  }
  cells.push_back(
      format_fixed(summary_value(summary, "steady_state.throughput_requests_per_s"), 3));
  cells.push_back(format_fixed(summary_value(summary, "ttft_s.p99") * 1e3, 1));
  cells.push_back(format_fixed(summary_value(summary, "tpot_s.p99") * 1e3, 2));
  cells.push_back(format_fixed(summary_value(summary, "e2e_s.p99"), 2));
  cells.push_back(verdict.met ? "yes" : "no");
  cells.push_back(violations_text(verdict));
}

const std::vector<std::string> kPointColumns{"req/s",     "TTFT p99 ms", "TPOT p99 ms",
                                             "E2E p99 s", "meets SLO",   "violations"};

int search_rate(Study& study, const po::variables_map& vm) {
  RateSearchOptions options;
  options.relative_precision = vm["precision"].as<double>();
  options.points_per_round = vm["points-per-round"].as<std::size_t>();
  options.max_points = vm["max-points"].as<std::size_t>();
  options.max_rate_per_s = vm["max-rate"].as<double>();
  options.min_rate_per_s = vm["min-rate"].as<double>();
  const nlohmann::json base =
      study_point_config(study.base, {}, study.context.data_root, "capacity");
  const double configured = configured_rate(base, "use --arrival poisson", "--start-rate");
  options.start_rate_per_s =
      vm.count("start-rate") != 0 ? vm["start-rate"].as<double>() : configured;

  const auto result =
      search_highest_rate(study.slo, options, [&](const std::vector<double>& rates) {
        std::vector<std::vector<ConfigOverride>> overrides;
        std::vector<std::string> names;
        for (const double rate : rates) {
          overrides.push_back({rate_override(rate)});
          names.push_back("capacity point (rate=" + rate_text(rate) + ")");
        }
        return study.run(overrides, names);
      });
  if (!study.context.processes.leader()) {
    return result.outcome == RateSearchResult::Outcome::NeverMet
               ? exit_code_for(ErrorKind::Infeasible)
               : 0;
  }

  std::vector<std::string> header{"rate req/s"};
  header.insert(header.end(), kPointColumns.begin(), kPointColumns.end());
  Table table(header, {header.size() - 1});
  nlohmann::json points = nlohmann::json::array();
  std::vector<std::vector<std::string>> key_cells;
  std::vector<const nlohmann::json*> summaries;
  std::vector<const SloVerdict*> verdicts;
  for (const auto& point : result.points) {
    std::vector<std::string> cells{rate_text(point.rate_per_s)};
    add_point_cells(cells, point.summary, point.verdict);
    table.add_row(cells);
    points.push_back({{"rate_per_s", point.rate_per_s},
                      {"verdict", verdict_json(point.verdict)},
                      {"summary", point.summary}});
    key_cells.push_back({format_round_trip(point.rate_per_s)});
    summaries.push_back(&point.summary);
    verdicts.push_back(&point.verdict);
  }

  std::string message;
  const std::string outcome(outcome_name(result.outcome));
  const RatePoint* best = result.best();
  switch (result.outcome) {
    case RateSearchResult::Outcome::Found:
      message = "Highest rate meeting the SLO: " + rate_text(result.passing_rate_per_s) +
                " req/s (" + rate_text(result.failing_rate_per_s) + " req/s fails; precision " +
                format_9_digits(options.relative_precision * 100) + "%)";
      break;
    case RateSearchResult::Outcome::AlwaysMet:
      message = "The SLO is met at every rate tried, up to " +
                rate_text(result.passing_rate_per_s) +
                " req/s (the largest tried): capacity is at least that (raise --max-rate)";
      break;
    case RateSearchResult::Outcome::Unresolved:
      message = "Stopped after " + std::to_string(result.points.size()) +
                " points (--max-points) with the answer between " +
                rate_text(result.passing_rate_per_s) + " and " +
                rate_text(result.failing_rate_per_s) + " req/s";
      break;
    case RateSearchResult::Outcome::NeverMet:
      if (best->verdict.fails_at_any_load) {
        message = "No rate meets the SLO: at " + rate_text(best->rate_per_s) + " req/s " +
                  violations_text(best->verdict) + ", and no other rate changes that";
      } else {
        message = "No rate meets the SLO: even " + rate_text(result.failing_rate_per_s) +
                  " req/s fails. Closest point: " + rate_text(best->rate_per_s) + " req/s (" +
                  violations_text(best->verdict) + ")";
      }
      break;
  }
  nlohmann::json document{{"command", "capacity"},
                          {"mode", "rate"},
                          {"slo", slo_json(study.slo)},
                          {"outcome", outcome},
                          {"message", message},
                          {"relative_precision", options.relative_precision},
                          {"points", points}};
  if (result.outcome != RateSearchResult::Outcome::NeverMet) {
    document["rate_per_s"] = result.passing_rate_per_s;
    if (result.failing_rate_per_s > 0) document["failing_rate_per_s"] = result.failing_rate_per_s;
  }
  publish_capacity(vm, points_csv({"rate_per_s"}, key_cells, summaries, verdicts), document);
  const bool never_met = result.outcome == RateSearchResult::Outcome::NeverMet;
  if (vm.count("json") != 0) {
    study.context.out << document.dump(2) << '\n';
  } else {
    table.print(study.context.out);
    // When no rate meets the SLO the message is the error line, printed once, below.
    if (!never_met) study.context.out << message << '\n';
  }
  if (never_met) {
    study.context.err << "servesim: error: " << message << '\n';
    return exit_code_for(ErrorKind::Infeasible);
  }
  return 0;
}

std::vector<ReplicaShape> parse_shapes(const std::string& list, const nlohmann::json& base) {
  std::vector<ReplicaShape> shapes;
  if (list.empty()) {
    shapes.push_back({base["hardware"].get<std::string>(), base["tp"].get<std::int64_t>(),
                      base["pp"].get<std::int64_t>(), std::nullopt});
    return shapes;
  }
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    // An optional price per GPU-hour after '@'.
    std::optional<double> price;
    const std::string::size_type at = item.find('@');
    if (at != std::string::npos) {
      const std::string text = item.substr(at + 1);
      try {
        std::size_t end = 0;
        const double value = std::stod(text, &end);
        if (end == text.size() && value > 0 && std::isfinite(value)) price = value;
      } catch (const std::exception&) {
      }
      if (!price) {
        throw UsageError("--shapes \"" + item +
                         "\": expected a positive price in USD per GPU-hour after '@'");
      }
    }
    const std::string shape_text = item.substr(0, at);
    std::vector<std::string> parts;
    std::stringstream fields(shape_text);
    std::string field;
    while (std::getline(fields, field, ':'))
      parts.push_back(field);
    const auto degree = [&](std::size_t i) -> std::int64_t {
      if (i >= parts.size()) return 1;
      try {
        std::size_t end = 0;
        const long long value = std::stoll(parts[i], &end);
        if (end == parts[i].size() && value >= 1) return value;
      } catch (const std::exception&) {
      }
      throw UsageError("--shapes \"" + item +
                       "\": expected HARDWARE[:TP[:PP]][@PRICE] with positive "
                       "integer degrees");
    };
    if (parts.empty() || parts[0].empty() || parts.size() > 3) {
      throw UsageError("--shapes \"" + item + "\": expected HARDWARE[:TP[:PP]][@PRICE]");
    }
    shapes.push_back({parts[0], degree(1), degree(2), price});
  }
  return shapes;
}

int search_replicas(Study& study, const po::variables_map& vm) {
  const double rate = vm["target-rate"].as<double>();
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw UsageError("--target-rate: expected a positive number of requests/s");
  }
  const nlohmann::json base =
      study_point_config(study.base, {}, study.context.data_root, "capacity");
  (void)configured_rate(base, "use --arrival poisson", "--start-rate");
  const auto shapes =
      parse_shapes(vm.count("shapes") != 0 ? vm["shapes"].as<std::string>() : "", base);
  const auto max_replicas = vm["max-replicas"].as<std::int64_t>();

  const auto results = search_fewest_replicas(
      study.slo, shapes, max_replicas, [&](const std::vector<ReplicaTrial>& trials) {
        std::vector<std::vector<ConfigOverride>> overrides;
        std::vector<std::string> names;
        for (const auto& trial : trials) {
          const auto& shape = shapes[trial.shape];
          overrides.push_back({rate_override(rate),
                               {"--shapes", "hardware=" + nlohmann::json(shape.hardware).dump()},
                               {"--shapes", "tp=" + std::to_string(shape.tp)},
                               {"--shapes", "pp=" + std::to_string(shape.pp)},
                               {"capacity", "replicas=" + std::to_string(trial.replicas)}});
          names.push_back("capacity point (" + shape.label() + ", " +
                          std::to_string(trial.replicas) + " replicas)");
        }
        return study.run(overrides, names);
      });
  if (!study.context.processes.leader()) return 0;

  std::vector<std::string> header{"shape", "replicas"};
  header.insert(header.end(), kPointColumns.begin(), kPointColumns.end());
  Table points_table(header, {0, header.size() - 1});
  Table answer_table({"shape", "replicas", "GPUs", "$/GPU-hour", "$/hour", "$/1M output tokens",
                      "TTFT p99 ms", "TPOT p99 ms", "note"},
                     {8});
  nlohmann::json shapes_json = nlohmann::json::array();
  std::vector<std::vector<std::string>> key_cells;
  std::vector<const nlohmann::json*> summaries;
  std::vector<const SloVerdict*> verdicts;
  bool any = false;
  for (const auto& result : results) {
    const auto& shape = result.shape;
    nlohmann::json points = nlohmann::json::array();
    for (const auto& point : result.points) {
      std::vector<std::string> cells{shape.label(), std::to_string(point.replicas)};
      add_point_cells(cells, point.summary, point.verdict);
      points_table.add_row(cells);
      points.push_back({{"replicas", point.replicas},
                        {"verdict", verdict_json(point.verdict)},
                        {"summary", point.summary}});
      key_cells.push_back({shape.hardware, std::to_string(shape.tp), std::to_string(shape.pp),
                           std::to_string(point.replicas)});
      summaries.push_back(&point.summary);
      verdicts.push_back(&point.verdict);
    }
    // The shape's own price, else --gpu-cost-per-hour, else the profile's list price.
    std::optional<double> price =
        shape.price_per_gpu_hour_usd ? shape.price_per_gpu_hour_usd
        : vm.count("gpu-cost-per-hour") != 0
            ? std::optional(vm["gpu-cost-per-hour"].as<double>())
            : load_hardware(shape.hardware, study.context).price_per_gpu_hour_usd;
    nlohmann::json entry{
        {"hardware", shape.hardware}, {"tp", shape.tp}, {"pp", shape.pp}, {"points", points}};
    const ReplicaPoint* answer = result.answer();
    if (answer == nullptr) {
      // No answer: the last point tried says why (it does not fit, it rejects requests, or
      // even the most replicas miss the SLO).
      const ReplicaPoint& last = result.points.back();
      const std::optional<std::string> unfit = does_not_fit(last.summary);
      answer_table.add_row(
          {shape.label(),
           last.verdict.fails_at_any_load ? "-" : "> " + std::to_string(max_replicas), "-", "-",
           "-", "-", "-", "-", violations_text(last.verdict)});
      entry["replicas"] = nullptr;
      if (unfit) entry["does_not_fit"] = *unfit;
    } else {
      any = true;
      const std::int64_t gpus = answer->replicas * shape.gpus_per_replica();
      entry["replicas"] = answer->replicas;
      entry["gpus"] = gpus;
      std::string per_gpu = "-", per_hour = "-", per_million = "-";
      if (price) {
        // At the offered load, which a shape meeting the SLO serves: the target rate times
        // the mean output of the requests arriving in the steady-state window.
        const double hour = static_cast<double>(gpus) * *price;
        const double arrivals_per_s =
            summary_value(answer->summary, "steady_state.offered_requests_per_s");
        const double tokens_per_hour =
            arrivals_per_s > 0
                ? rate *
                      summary_value(answer->summary, "steady_state.offered_output_tokens_per_s") /
                      arrivals_per_s * 3600
                : 0.0;
        per_gpu = format_fixed(*price, 2);
        per_hour = format_fixed(hour, 2);
        entry["usd_per_gpu_hour"] = *price;
        entry["usd_per_hour"] = hour;
        if (tokens_per_hour > 0) {
          per_million = format_fixed(hour / tokens_per_hour * 1e6, 3);
          entry["usd_per_million_output_tokens"] = hour / tokens_per_hour * 1e6;
        }
      }
      answer_table.add_row(
          {shape.label(), std::to_string(answer->replicas), std::to_string(gpus), per_gpu, per_hour,
           per_million, format_fixed(summary_value(answer->summary, "ttft_s.p99") * 1e3, 1),
           format_fixed(summary_value(answer->summary, "tpot_s.p99") * 1e3, 2), ""});
    }
    shapes_json.push_back(std::move(entry));
  }
  const nlohmann::json document{{"command", "capacity"},        {"mode", "replicas"},
                                {"slo", slo_json(study.slo)},   {"target_rate_per_s", rate},
                                {"max_replicas", max_replicas}, {"shapes", shapes_json}};
  publish_capacity(vm,
                   points_csv({"hardware", "tp", "pp", "replicas"}, key_cells, summaries, verdicts),
                   document);
  if (vm.count("json") != 0) {
    study.context.out << document.dump(2) << '\n';
  } else {
    points_table.print(study.context.out);
    study.context.out << "\nFewest replicas meeting the SLO at " << rate_text(rate) << " req/s:\n";
    answer_table.print(study.context.out);
    study.context.out
        << "req/s is over the steady state, from the arrival of the first tenth of the requests "
           "to the last\narrival; $/1M output tokens at the offered load (the target rate times "
           "the mean output per\nrequest arriving then), which a shape meeting the SLO serves.\n";
  }
  if (!any) {
    study.context.err << "servesim: error: no shape meets the SLO at " << rate_text(rate)
                      << " req/s with up to " << max_replicas << " replicas\n";
    return exit_code_for(ErrorKind::Infeasible);
  }
  return 0;
}

}  // namespace

int run_capacity(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("slo", po::value<std::vector<std::string>>()->value_name("TERM"),
                        "a limit to meet (repeatable): METRIC_STAT=SECONDS with METRIC ttft, "
                        "tpot, itl or e2e and STAT mean, p50, p90, p99 or max (ttft_p99=0.5), "
                        "or attainment=FRACTION of requests meeting --slo-ttft and --slo-tpot")(
      "start-rate", po::value<double>()->value_name("REQ_PER_S"),
      "first rate tried (default the workload's rate)")(
      "precision", po::value<double>()->value_name("F")->default_value(0.02, "0.02"),
      "stop when the failing rate is within this fraction above the passing one")(
      "points-per-round", po::value<std::size_t>()->value_name("K")->default_value(3),
      "rates simulated per search round (fixed, so -j never changes the answer)")(
      "max-points", po::value<std::size_t>()->value_name("N")->default_value(200),
      "simulations at most")(
      "min-rate", po::value<double>()->value_name("REQ_PER_S")->default_value(1e-4, "0.0001"),
      "lowest rate tried")(
      "max-rate", po::value<double>()->value_name("REQ_PER_S")->default_value(1e6, "1e6"),
      "highest rate tried")("target-rate", po::value<double>()->value_name("REQ_PER_S"),
                            "instead: fewest replicas that meet the SLO at this rate")(
      "shapes", po::value<std::string>()->value_name("LIST"),
      "with --target-rate: replica shapes HARDWARE[:TP[:PP]][@PRICE],... to compare (default "
      "the configured one), e.g. h100-sxm:1,h100-sxm:2@3.10,a100-80gb:4; PRICE is USD per "
      "GPU-hour, over --gpu-cost-per-hour and the profile's price")(
      "max-replicas", po::value<std::int64_t>()->value_name("N")->default_value(1024),
      "with --target-rate: most replicas tried")(
      "gpu-cost-per-hour", po::value<double>()->value_name("USD"),
      "price of one GPU for an hour (default the hardware profile's price_per_gpu_hour_usd)")(
      "out", po::value<std::string>()->value_name("DIR"),
      "write capacity.csv (every point simulated) and summary.json here")(
      "json", "print summary.json to stdout instead of the tables");
  add_jobs_option(options);
  add_run_options(options);
  const auto vm = parse_options(
      context, options, "servesim capacity --slo TERM [--slo ...] [run options]",
      "Finds the highest arrival rate that meets latency SLOs (bracketing by doubling, then\n"
      "narrowing to --precision), or with --target-rate the fewest replicas of each shape that\n"
      "meet them, with GPUs and cost. Every simulated point is listed.\n"
      "Examples: servesim capacity --slo ttft_p99=0.5 --slo tpot_p99=0.05 --num-requests 4000\n"
      "          servesim capacity --target-rate 50 --shapes h100-sxm:1,a100-80gb:2 \\\n"
      "            --slo-ttft 1 --slo-tpot 0.1 --slo attainment=0.9");
  if (!vm) return 0;

  SloTarget slo;
  if (vm->count("slo") != 0) {
    for (const auto& term : (*vm)["slo"].as<std::vector<std::string>>())
      add_slo_term(slo, term, "--slo");
  }
  if (slo.empty()) throw UsageError("capacity: give at least one --slo (e.g. --slo ttft_p99=0.5)");
  const auto executor = executor_from(*vm, context);
  ProgressMeter progress(context.err, "capacity", context.terminal);
  Study study{context, run_config_sources(*vm), slo, *executor, progress};
  return vm->count("target-rate") != 0 ? search_replicas(study, *vm) : search_rate(study, *vm);
}

}  // namespace servesim::cli
