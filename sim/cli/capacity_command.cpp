#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/app/app.h"
#include "sim/cli/band_report.h"
#include "sim/cli/capacity_study.h"
#include "sim/cli/run_options.h"
#include "sim/cli/study_options.h"
#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/rate_search.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {
namespace {

// The rate search of one shape (the configured one when --shapes is not given).
struct RateAnswer {
  std::optional<ReplicaShape> shape;
  std::optional<std::string> unreachable;  // found before searching
  RateSearchResult result;
  std::string message;
  std::optional<ServingPrices> prices;
  std::int64_t gpus = 0;
  bool met() const { return !unreachable && result.outcome != RateSearchResult::Outcome::NeverMet; }
};

std::string answer_message(const RateSearchResult& result, const RateSearchOptions& options) {
  const RatePoint* best = result.best();
  switch (result.outcome) {
    case RateSearchResult::Outcome::Found:
      if (const RatePoint* undecided = result.undecided()) {
        return "Highest rate meeting the SLO within the run: " +
               rate_text(result.passing_rate_per_s) + " req/s, at least (" +
               rate_text(undecided->rate_per_s) +
               " req/s undecided within the run: raise --num-requests to at least " +
               std::to_string(undecided->verdict.requests_to_settle) + "; precision " +
               format_9_digits(options.relative_precision * 100) + "%)";
      }
      return "Highest rate meeting the SLO: " + rate_text(result.passing_rate_per_s) + " req/s (" +
             rate_text(result.failing_rate_per_s) + " req/s fails; precision " +
             format_9_digits(options.relative_precision * 100) + "%)";
    case RateSearchResult::Outcome::AlwaysMet:
      return "The SLO is met at every rate tried, up to " + rate_text(result.passing_rate_per_s) +
             " req/s (the largest tried): capacity is at least that (raise --max-rate)";
    case RateSearchResult::Outcome::Unresolved:
      return "Stopped after " + std::to_string(result.points.size()) +
             " points (--max-points) with the answer between " +
             rate_text(result.passing_rate_per_s) + " and " + rate_text(result.failing_rate_per_s) +
             " req/s";
    case RateSearchResult::Outcome::NeverMet:
      if (best->verdict.fails_at_any_load) {
        return "No rate meets the SLO: at " + rate_text(best->rate_per_s) + " req/s " +
               violations_text(best->verdict) + ", and no other rate changes that";
      }
      return "No rate meets the SLO: even " + rate_text(result.failing_rate_per_s) +
             " req/s fails. Closest point: " + rate_text(best->rate_per_s) + " req/s (" +
             violations_text(best->verdict) + ")";
  }
  return "";
}

nlohmann::json answer_json(const RateAnswer& answer, const RateSearchOptions& options) {
  nlohmann::json json = nlohmann::json::object();
  if (answer.shape) {
    json["hardware"] = answer.shape->hardware;
    json["tp"] = answer.shape->tp;
    json["pp"] = answer.shape->pp;
  }
  if (answer.unreachable) {
    json["outcome"] = "unreachable";
    json["message"] = *answer.unreachable;
    json["points"] = nlohmann::json::array();
    return json;
  }
  const RateSearchResult& result = answer.result;
  json["outcome"] = std::string(outcome_name(result.outcome));
  json["message"] = answer.message;
  json["relative_precision"] = options.relative_precision;
  if (answer.met()) {
    json["rate_per_s"] = result.passing_rate_per_s;
    if (result.failing_rate_per_s > 0) json["failing_rate_per_s"] = result.failing_rate_per_s;
    if (const RatePoint* undecided = result.undecided()) {
      json["undecided"] = {{"rate_per_s", undecided->rate_per_s},
                           {"requests_to_settle", undecided->verdict.requests_to_settle}};
    }
    json["gpus"] = answer.gpus;
    if (answer.prices) json.update(serving_prices_json(*answer.prices));
  }
  nlohmann::json points = nlohmann::json::array();
  for (const auto& point : result.points) {
    points.push_back({{"rate_per_s", point.rate_per_s},
                      {"verdict", verdict_json(point.verdict)},
                      {"summary", point.summary}});
  }
  json["points"] = std::move(points);
  return json;
}

// The rate search's flags; the start rate is --start-rate's when given (else each shape's
// configured rate, set per shape).
RateSearchOptions rate_search_options(const po::variables_map& vm) {
  RateSearchOptions options;
  options.relative_precision = vm["precision"].as<double>();
  // Read signed, so that -1 is refused rather than wrapped to 2^64 - 1.
  options.points_per_round = static_cast<std::size_t>(*integer_flag(vm, "points-per-round", 1));
  options.max_points = static_cast<std::size_t>(*integer_flag(vm, "max-points", 1));
  options.max_rate_per_s = vm["max-rate"].as<double>();
  options.min_rate_per_s = vm["min-rate"].as<double>();
  if (vm.count("start-rate") != 0) options.start_rate_per_s = vm["start-rate"].as<double>();
  return options;
}

// Searches the highest rate of each shape (the configured one without --shapes), after
// the bounds that no rate can pass are found for all of them at once.
std::vector<RateAnswer> search_each_shape(CapacityStudy& study, const po::variables_map& vm,
                                          const std::vector<ReplicaShape>& shapes, bool per_shape,
                                          RateSearchOptions& options) {
  std::vector<RateAnswer> answers;
  std::vector<std::vector<ConfigOverride>> shape_sets;
  std::vector<std::string> probe_names;
  for (const auto& shape : shapes) {
    RateAnswer& answer = answers.emplace_back();
    if (per_shape) answer.shape = shape;
    shape_sets.push_back(per_shape ? shape_overrides(shape, "--shapes")
                                   : std::vector<ConfigOverride>{});
    probe_names.push_back("capacity bound (" + shape.label() + ")");
  }
  const auto unreachable = study.unreachable(shape_sets, probe_names);
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    RateAnswer& answer = answers[s];
    answer.unreachable = unreachable[s];
    if (answer.unreachable) continue;
    const nlohmann::json config =
        study_point_config(study.base, shape_sets[s], study.context.data_root, "capacity");
    options.start_rate_per_s =
        vm.count("start-rate") != 0
            ? vm["start-rate"].as<double>()
            : configured_rate(config, "use --arrival poisson", "--start-rate");
    answer.result =
        search_rate_with(study, shape_sets[s], per_shape ? shapes[s].label() : "", options);
    answer.message = answer_message(answer.result, options);
    answer.gpus = config.value("replicas", std::int64_t{1}) * shapes[s].gpus_per_replica();
    if (answer.met()) {
      if (const RatePoint* best = answer.result.best()) {
        if (const auto price = price_per_gpu_hour(shapes[s], vm, study.context)) {
          answer.prices =
              serving_prices(*price, answer.gpus, answer.result.passing_rate_per_s, best->summary);
        }
      }
    }
  }
  return answers;
}

// Every simulated point of every shape, as the table printed and as the points written.
struct RatePointTables {
  Table table;
  CapacityPoints points;
};

RatePointTables rate_point_tables(const std::vector<RateAnswer>& answers, bool per_shape) {
  std::vector<std::string> header;
  if (per_shape) header.emplace_back("shape");
  header.emplace_back("rate req/s");
  header.insert(header.end(), kPointColumns.begin(), kPointColumns.end());
  std::vector<std::size_t> text_columns{header.size() - 1};
  if (per_shape) text_columns.push_back(0);
  RatePointTables tables{Table(header, text_columns), {}};
  CapacityPoints& points = tables.points;
  if (per_shape) points.keys = {"hardware", "tp", "pp"};
  points.keys.emplace_back("rate_per_s");
  points.x_label = "offered rate (requests/s)";
  for (const auto& answer : answers) {
    for (const auto& point : answer.result.points) {
      std::vector<std::string> cells;
      if (per_shape) cells.push_back(answer.shape->label());
      cells.push_back(rate_text(point.rate_per_s));
      add_point_cells(cells, point.summary, point.verdict);
      tables.table.add_row(cells);
      std::vector<std::string> keys;
      if (per_shape) {
        keys = {answer.shape->hardware, std::to_string(answer.shape->tp),
                std::to_string(answer.shape->pp)};
      }
      keys.push_back(format_round_trip(point.rate_per_s));
      points.add(std::move(keys), point.summary, point.verdict, point.rate_per_s);
    }
  }
  return tables;
}

// The answer per shape, after the points: rate, GPUs, prices and a note.
void print_shape_answers(std::ostream& out, const std::vector<RateAnswer>& answers) {
  std::vector<std::string> answer_header{"shape", "rate req/s", "GPUs"};
  answer_header.insert(answer_header.end(), kPriceColumns.begin(), kPriceColumns.end());
  answer_header.emplace_back("note");
  Table answer_table(answer_header, {0, answer_header.size() - 1});
  for (const auto& answer : answers) {
    std::vector<std::string> row{answer.shape->label()};
    if (answer.met()) {
      row.push_back(rate_text(answer.result.passing_rate_per_s));
      row.push_back(std::to_string(answer.gpus));
    } else {
      row.insert(row.end(), {"-", "-"});
    }
    const auto cells = price_cells(answer.prices);
    row.insert(row.end(), cells.begin(), cells.end());
    row.push_back(answer.unreachable ? *answer.unreachable : answer.message);
    answer_table.add_row(row);
  }
  out << "\nHighest rate meeting the SLO per shape:\n";
  answer_table.print(out);
}

// The answer of the configured shape, after its points: the rate and, with a price, the cost.
// When no rate meets the SLO the message is the error line, printed once, by the caller.
void print_single_answer(std::ostream& out, const RateAnswer& answer) {
  if (!answer.met()) return;
  out << answer.message << '\n';
  if (const RatePoint* best = answer.result.best()) print_error_bands(out, best->summary);
  if (!answer.prices) return;
  const ServingPrices& p = *answer.prices;
  out << "At that rate, " << answer.gpus << " GPUs at $" << format_fixed(p.usd_per_gpu_hour, 2)
      << "/GPU-hour: $" << format_fixed(p.usd_per_hour, 2) << "/hour, $"
      << format_fixed(p.usd_per_million_input_tokens, 3) << "/M input, $"
      << format_fixed(p.usd_per_million_output_tokens, 3) << "/M output, $"
      << format_fixed(p.usd_per_million_tokens, 3) << "/M tokens, $"
      << format_fixed(p.usd_per_thousand_requests, 4) << "/1k requests\n";
}

int search_rate(CapacityStudy& study, const po::variables_map& vm) {
  RateSearchOptions options = rate_search_options(vm);
  const nlohmann::json base =
      study_point_config(study.base, {}, study.context.data_root, "capacity");
  (void)configured_rate(base, "use --arrival poisson", "--start-rate");
  const bool per_shape = vm.count("shapes") != 0;
  const auto shapes = parse_shapes(per_shape ? vm["shapes"].as<std::string>() : "", base);
  const std::vector<RateAnswer> answers = search_each_shape(study, vm, shapes, per_shape, options);
  const bool any_met =
      std::any_of(answers.begin(), answers.end(), [](const RateAnswer& a) { return a.met(); });
  const int failure = exit_code_for(ErrorKind::Infeasible);
  if (!study.context.processes.leader()) return any_met ? 0 : failure;

  const RatePointTables tables = rate_point_tables(answers, per_shape);
  // No shape fits or starts: nothing to publish (as `sweep` when no point fits); each shape's
  // reason, in its row and on the error line.
  std::vector<ShapePoints> shape_points;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    ShapePoints& points = shape_points.emplace_back(ShapePoints{shapes[s].label(), {}});
    for (const RatePoint& point : answers[s].result.points)
      points.summaries.push_back(&point.summary);
  }
  if (const auto unfit = no_shape_fits(shape_points)) {
    if (vm.count("json") == 0 && !tables.points.key_cells.empty()) {
      tables.table.print(study.context.out);
    }
    return refuse_unfit_shapes(study, one_line(*unfit));
  }
  nlohmann::json document{{"command", "capacity"}, {"mode", "rate"}, {"slo", slo_json(study.slo)}};
  if (per_shape) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& answer : answers)
      list.push_back(answer_json(answer, options));
    document["shapes"] = std::move(list);
  } else {
    document.update(answer_json(answers.front(), options));
  }
  publish_capacity(study, vm, tables.points, document);

  if (vm.count("json") != 0) {
    study.context.out << document.dump(2) << '\n';
  } else if (per_shape) {
    if (!tables.points.key_cells.empty()) tables.table.print(study.context.out);
    print_shape_answers(study.context.out, answers);
  } else {
    if (!answers.front().result.points.empty()) tables.table.print(study.context.out);
    print_single_answer(study.context.out, answers.front());
  }
  if (!any_met) {
    if (per_shape) {
      study.context.err << "servesim: error: no shape meets the SLO at any rate\n";
    } else {
      const RateAnswer& answer = answers.front();
      study.context.err << "servesim: error: "
                        << one_line(answer.unreachable ? *answer.unreachable : answer.message)
                        << '\n';
    }
    return failure;
  }
  return 0;
}

// capacity's own flags, beside the run options and the study flags (-j, --resume).
void add_capacity_options(po::options_description& options) {
  options.add_options()("slo", po::value<std::vector<std::string>>()->value_name("TERM"),
                        "a limit to meet (repeatable): METRIC_STAT=SECONDS with METRIC ttft, "
                        "tpot, itl or e2e and STAT mean, p50, p90, p99 or max (ttft_p99=0.5), "
                        "or attainment=FRACTION of requests meeting --slo-ttft and --slo-tpot")(
      "start-rate", po::value<double>()->value_name("REQ_PER_S"),
      "first rate tried (default the workload's rate)")(
      "precision", po::value<double>()->value_name("F")->default_value(0.02, "0.02"),
      "stop when the failing rate is within this fraction above the passing one")(
      "points-per-round", po::value<std::int64_t>()->value_name("K")->default_value(3),
      "rates simulated per search round (fixed, so -j never changes the answer)")(
      "max-points", po::value<std::int64_t>()->value_name("N")->default_value(200),
      "simulations at most")(
      "min-rate", po::value<double>()->value_name("REQ_PER_S")->default_value(1e-4, "0.0001"),
      "lowest rate tried")(
      "max-rate", po::value<double>()->value_name("REQ_PER_S")->default_value(1e6, "1e6"),
      "highest rate tried")("target-rate", po::value<double>()->value_name("REQ_PER_S"),
                            "instead: fewest replicas that meet the SLO at this rate")(
      "shapes", po::value<std::string>()->value_name("LIST"),
      "replica shapes HARDWARE[:TP[:PP]][@PRICE],... to compare (default the configured "
      "one), e.g. h100-sxm:1,h100-sxm:2@3.10,a100-80gb:4: the highest rate of each, or with "
      "--target-rate its fewest replicas; PRICE is USD per GPU-hour, over "
      "--gpu-cost-per-hour and the profile's price")(
      "max-replicas", po::value<std::int64_t>()->value_name("N")->default_value(1024),
      "with --target-rate: most replicas tried (per role with --disaggregated)")(
      "disaggregated",
      "with --target-rate: also every prefill/decode pair of the shapes as a disaggregated "
      "deployment, with its fewest replicas per role (rate-matched, then simulated), the best "
      "aggregated and disaggregated answers and the Pareto front (docs/disaggregation.md)")(
      "minimize", po::value<std::string>()->value_name("WHAT")->default_value("gpus"),
      "with --disaggregated: the best answer has the fewest gpus, or costs least per token "
      "(cost)")(
      "plan-at", po::value<std::string>()->value_name("EDGE")->default_value("prediction"),
      "judge the SLO on the latencies as predicted (prediction), or at their error bands' "
      "pessimistic edge (upper): each latency x (1 + the band's upper edge) of the "
      "deployment's calibration (docs/validation.md, Error bands)")(
      "gpu-cost-per-hour", po::value<double>()->value_name("USD"),
      "price of one GPU for an hour (default the hardware profile's price_per_gpu_hour_usd)")(
      "out", po::value<std::string>()->value_name("DIR"),
      "write capacity.csv (every point simulated), summary.json and the points' plot "
      "(capacity.svg) here")("no-plots",
                             "write the plot data and gnuplot script but do not render them")(
      "json", "print summary.json to stdout instead of the tables");
  add_jobs_option(options);
  add_resume_option(options);
  add_run_options(options);
  add_plot_format_option(options);
}

// The SLO, after every flag of the search is checked: before any point runs or the journal
// opens.
SloTarget checked_capacity_flags(const po::variables_map& vm) {
  plot_formats_from(vm);  // a bad list is a usage error before anything runs
  if (vm.count("gpu-cost-per-hour") != 0) {
    const double price = vm["gpu-cost-per-hour"].as<double>();
    if (!(price > 0) || !std::isfinite(price)) {
      throw InputError("--gpu-cost-per-hour", "expected a positive price in USD per GPU-hour");
    }
  }
  (void)integer_flag(vm, "max-replicas", 1, kMaxReplicas);
  for (const char* flag : {"target-rate", "start-rate"}) {
    if (vm.count(flag) != 0 &&
        !(vm[flag].as<double>() > 0 && std::isfinite(vm[flag].as<double>()))) {
      throw InputError("--" + std::string(flag), "expected a positive number of requests/s");
    }
  }
  SloTarget slo;
  if (vm.count("slo") != 0) {
    for (const auto& term : vm["slo"].as<std::vector<std::string>>())
      add_slo_term(slo, term, "--slo");
  }
  if (slo.empty()) throw UsageError("capacity: give at least one --slo (e.g. --slo ttft_p99=0.5)");
  set_plan_at(slo, vm["plan-at"].as<std::string>(), "--plan-at");
  if (vm.count("disaggregated") != 0 && vm.count("target-rate") == 0) {
    throw UsageError("--disaggregated: give --target-rate, the rate every deployment must serve");
  }
  if (vm.count("target-rate") == 0) check_rate_search_options(rate_search_options(vm));
  return slo;
}

}  // namespace

int run_capacity(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  add_capacity_options(options);
  const auto vm = parse_options(
      context, options, "servesim capacity --slo TERM [--slo ...] [run options]",
      "Finds the highest arrival rate that meets latency SLOs (bracketing by doubling, then\n"
      "narrowing to --precision), or with --target-rate the fewest replicas of each shape that\n"
      "meet them, with GPUs and cost. Every simulated point is listed.\n"
      "Examples: servesim capacity --slo ttft_p99=0.5 --slo tpot_p99=0.05 --num-requests 4000\n"
      "          servesim capacity --target-rate 50 --shapes h100-sxm:1,a100-80gb:2 \\\n"
      "            --slo-ttft 1 --slo-tpot 0.1 --slo attainment=0.9");
  if (!vm) return 0;
  const SloTarget slo = checked_capacity_flags(*vm);
  const auto executor = executor_from(*vm, context);
  ProgressMeter progress(context.err, "capacity", context.terminal);
  std::optional<PointJournal> journal = study_journal(*vm, context, "capacity");
  CapacityStudy study{
      {run_config_sources(*vm), slo, *executor, context.data_root, std::filesystem::current_path(),
       &progress, PointMeasure{true, completions_needed(slo), StabilityCriteria{}, &slo},
       journal ? &*journal : nullptr},
      context};
  if (vm->count("disaggregated") != 0) return search_layouts(study, *vm);
  return vm->count("target-rate") != 0 ? search_replicas(study, *vm) : search_rate(study, *vm);
}

}  // namespace servesim::cli
