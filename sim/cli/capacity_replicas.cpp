#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/cli/band_report.h"
#include "sim/cli/capacity_study.h"
#include "sim/core/error.h"
#include "sim/study/rate_search.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {
namespace {

// What the replica search shows: its tables, summary.json's shapes and capacity.csv's points.
struct ReplicaSearchOutput {
  Table points_table;
  Table answer_table;
  nlohmann::json shapes_json = nlohmann::json::array();
  CapacityPoints simulated;
  bool any = false;  // whether any shape meets the SLO
  // The most requests that an undecided point of any shape needs to settle (0: none).
  std::int64_t requests_to_settle = 0;
};

ReplicaSearchOutput replica_search_output() {
  std::vector<std::string> header{"shape", "replicas"};
  header.insert(header.end(), kPointColumns.begin(), kPointColumns.end());
  std::vector<std::string> answer_header{"shape", "replicas", "GPUs", "$/GPU-hour"};
  answer_header.insert(answer_header.end(), kPriceColumns.begin(), kPriceColumns.end());
  answer_header.insert(answer_header.end(),
                       {"TTFT p99 ms", "TTFT band", "TPOT p99 ms", "TPOT band", "note"});
  ReplicaSearchOutput output{Table(header, {0, header.size() - 1}),
                             Table(answer_header, {answer_header.size() - 1}),
                             nlohmann::json::array(),
                             {},
                             false,
                             0};
  output.simulated.keys = {"hardware", "tp", "pp", "replicas"};
  output.simulated.x_label = "GPUs";
  return output;
}

// An answer row without an answer: its replicas cell, no GPUs nor prices, and why.
std::vector<std::string> unanswered_replica_row(const ReplicaShape& shape,
                                                const std::string& replicas,
                                                const std::string& note) {
  const std::vector<std::string> no_prices(kPriceColumns.size() + 3, "-");
  std::vector<std::string> row{shape.label(), replicas, "-"};
  row.insert(row.end(), no_prices.begin(), no_prices.end());
  row.push_back(note);
  return row;
}

// A shape whose requests alone already miss the SLO.
void add_unreachable_shape(ReplicaSearchOutput& output, const ReplicaShape& shape,
                           const std::string& reason) {
  nlohmann::json entry{{"hardware", shape.hardware}, {"tp", shape.tp}, {"pp", shape.pp}};
  output.answer_table.add_row(unanswered_replica_row(shape, "-", reason));
  entry["replicas"] = nullptr;
  entry["unreachable"] = reason;
  entry["points"] = nlohmann::json::array();
  output.shapes_json.push_back(std::move(entry));
}

// A searched shape: every point it simulated, and its fewest replicas or why there are none.
void add_searched_shape(ReplicaSearchOutput& output, const CapacityStudy& study,
                        const po::variables_map& vm, const ReplicaShape& shape,
                        const ReplicaSearchResult& result, double rate, std::int64_t max_replicas) {
  nlohmann::json entry{{"hardware", shape.hardware}, {"tp", shape.tp}, {"pp", shape.pp}};
  nlohmann::json points = nlohmann::json::array();
  for (const auto& point : result.points) {
    std::vector<std::string> cells{shape.label(), std::to_string(point.replicas)};
    add_point_cells(cells, point.summary, point.verdict);
    output.points_table.add_row(cells);
    points.push_back({{"replicas", point.replicas},
                      {"verdict", verdict_json(point.verdict)},
                      {"summary", point.summary}});
    output.simulated.add({shape.hardware, std::to_string(shape.tp), std::to_string(shape.pp),
                          std::to_string(point.replicas)},
                         point.summary, point.verdict,
                         static_cast<double>(point.replicas * shape.gpus_per_replica()));
  }
  entry["points"] = points;
  const ReplicaPoint* answer = result.answer();
  const ReplicaPoint* undecided = result.undecided();
  std::string undecided_note;
  if (undecided != nullptr) {
    // The run was too short to judge that count: the search stopped there rather than add
    // replicas, which would not settle it.
    entry["undecided"] = {{"replicas", undecided->replicas},
                          {"requests_to_settle", undecided->verdict.requests_to_settle}};
    output.requests_to_settle =
        std::max(output.requests_to_settle, undecided->verdict.requests_to_settle);
    undecided_note = std::to_string(undecided->replicas) +
                     (undecided->replicas == 1 ? " replica" : " replicas") +
                     " undecided within the run: raise --num-requests to at least " +
                     std::to_string(undecided->verdict.requests_to_settle);
  }
  if (answer == nullptr && undecided != nullptr) {
    output.answer_table.add_row(unanswered_replica_row(shape, "?", undecided_note));
    entry["replicas"] = nullptr;
  } else if (answer == nullptr) {
    // No answer: the last point tried says why (it does not fit, it rejects requests, or
    // even the most replicas miss the SLO).
    const ReplicaPoint& last = result.points.back();
    const std::optional<std::string> unfit = does_not_fit(last.summary);
    output.answer_table.add_row(unanswered_replica_row(
        shape, last.verdict.fails_at_any_load ? "-" : "> " + std::to_string(max_replicas),
        violations_text(last.verdict)));
    entry["replicas"] = nullptr;
    if (unfit) entry["does_not_fit"] = *unfit;
    if (last.summary.value("does_not_start", false)) entry["does_not_start"] = true;
  } else {
    output.any = true;
    const std::int64_t gpus = answer->replicas * shape.gpus_per_replica();
    entry["replicas"] = answer->replicas;
    entry["gpus"] = gpus;
    // At the offered load, which a shape meeting the SLO serves (it is stable): the target
    // rate, with the mean prompt and output of the requests arriving in the steady state.
    const std::optional<double> price = price_per_gpu_hour(shape, vm, study.context);
    const std::optional<ServingPrices> prices =
        price ? serving_prices(*price, gpus, rate, answer->summary) : std::nullopt;
    if (prices) entry.update(serving_prices_json(*prices));
    std::vector<std::string> row{shape.label(), std::to_string(answer->replicas),
                                 std::to_string(gpus), price ? format_fixed(*price, 2) : "-"};
    const auto cells = price_cells(prices);
    row.insert(row.end(), cells.begin(), cells.end());
    row.push_back(format_fixed(summary_value(answer->summary, "ttft_s.p99") * 1e3, 1));
    row.push_back(band_cell(answer->summary, BandMetric::Ttft));
    row.push_back(format_fixed(summary_value(answer->summary, "tpot_s.p99") * 1e3, 2));
    row.push_back(band_cell(answer->summary, BandMetric::Tpot));
    if (answer->summary.contains("error_bands"))
      entry["error_bands"] = answer->summary["error_bands"];
    // An undecided count below the answer: fewer replicas may do.
    row.push_back(undecided_note.empty() ? "" : "fewer may do: " + undecided_note);
    output.answer_table.add_row(row);
  }
  output.shapes_json.push_back(std::move(entry));
}

void print_replica_search(std::ostream& out, const ReplicaSearchOutput& output, double rate) {
  if (!output.simulated.key_cells.empty()) output.points_table.print(out);
  out << "\nFewest replicas meeting the SLO at " << rate_text(rate) << " req/s:\n";
  output.answer_table.print(out);
  out << "req/s is over the steady state, from the end of the warm-up to the last arrival; a\n"
         "point meets the SLO only if it is stable (it serves what it is offered and its\n"
         "backlog does not grow). Prices are at the offered load (the target rate, with the\n"
         "mean prompt and output of the requests arriving then), which a stable shape serves.\n"
         "Bands: measured / predicted - 1 of validated deployments of the class, 10th to 90th\n"
         "percentile (docs/validation.md, Error bands; - where no calibration covers it).\n";
}

}  // namespace

int search_replicas(CapacityStudy& study, const po::variables_map& vm) {
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

  // Shapes whose requests alone already miss the SLO are not searched.
  std::vector<std::vector<ConfigOverride>> probe_overrides;
  std::vector<std::string> probe_names;
  for (const auto& shape : shapes) {
    probe_overrides.push_back(shape_overrides(shape, "--shapes"));
    probe_names.push_back("capacity bound (" + shape.label() + ")");
  }
  const auto unreachable = study.unreachable(probe_overrides, probe_names);
  std::vector<ReplicaShape> searched;
  std::vector<std::size_t> searched_index(shapes.size(), shapes.size());
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (unreachable[s]) continue;
    searched_index[s] = searched.size();
    searched.push_back(shapes[s]);
  }

  const auto results = search_shape_replicas(study, searched, rate, max_replicas);
  if (!study.context.processes.leader()) return 0;

  ReplicaSearchOutput output = replica_search_output();
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (unreachable[s]) {
      add_unreachable_shape(output, shapes[s], *unreachable[s]);
    } else {
      add_searched_shape(output, study, vm, shapes[s], results[searched_index[s]], rate,
                         max_replicas);
    }
  }
  // No shape fits or starts: nothing to publish (as `sweep` when no point fits); each shape's
  // reason, in its row and on the error line.
  std::vector<ShapePoints> shape_points;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    ShapePoints& points = shape_points.emplace_back(ShapePoints{shapes[s].label(), {}});
    if (unreachable[s]) continue;
    for (const auto& point : results[searched_index[s]].points)
      points.summaries.push_back(&point.summary);
  }
  if (const auto unfit = no_shape_fits(shape_points)) {
    if (vm.count("json") == 0) print_replica_search(study.context.out, output, rate);
    return refuse_unfit_shapes(study, *unfit);
  }
  const nlohmann::json document{{"command", "capacity"},        {"mode", "replicas"},
                                {"slo", slo_json(study.slo)},   {"target_rate_per_s", rate},
                                {"max_replicas", max_replicas}, {"shapes", output.shapes_json}};
  publish_capacity(study, vm, output.simulated, document);
  if (vm.count("json") != 0) {
    study.context.out << document.dump(2) << '\n';
  } else {
    print_replica_search(study.context.out, output, rate);
  }
  if (!output.any) {
    study.context.err << "servesim: error: no shape meets the SLO at " << rate_text(rate)
                      << " req/s with up to " << max_replicas << " replicas";
    if (output.requests_to_settle > 0) {
      study.context.err << " within the run (points undecided: raise --num-requests to at least "
                        << output.requests_to_settle << ")";
    }
    study.context.err << '\n';
    return exit_code_for(ErrorKind::Infeasible);
  }
  return 0;
}

}  // namespace servesim::cli
