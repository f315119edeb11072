#include <cmath>
#include <string>

#include "sim/cli/capacity_layouts.h"
#include "sim/cli/capacity_study.h"
#include "sim/cli/study_options.h"
#include "sim/core/error.h"
#include "sim/study/rate_search.h"

namespace servesim::cli {
namespace {

// --target-rate, --minimize, --shapes, --max-replicas and --gpu-cost-per-hour, checked
// against the base configuration.
LayoutSearchTerms parse_layout_search(const CapacityStudy& study, const po::variables_map& vm) {
  LayoutSearchTerms terms;
  const double rate = vm["target-rate"].as<double>();
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw UsageError("--target-rate: expected a positive number of requests/s");
  }
  terms.rate_per_s = rate;
  const std::string minimize = vm["minimize"].as<std::string>();
  if (minimize != "gpus" && minimize != "cost") {
    throw UsageError("--minimize: expected gpus or cost, got \"" + minimize + "\"");
  }
  terms.minimize = minimize;
  terms.by_cost = minimize == "cost";
  const nlohmann::json base = study_point_config(study.base, {}, study.data_root, "capacity");
  (void)configured_rate(base, "use --arrival poisson", "--start-rate");
  if (base.contains("disaggregation") && !base["disaggregation"].is_null()) {
    throw UsageError(
        "--disaggregated: the search lays the roles out from --shapes; drop the "
        "disaggregation section and flags (--disaggregation, --prefill-replicas, ...)");
  }
  terms.shapes = parse_shapes(vm.count("shapes") != 0 ? vm["shapes"].as<std::string>() : "", base);
  terms.max_replicas = vm["max-replicas"].as<std::int64_t>();
  terms.gpu_cost_per_hour = gpu_cost_flag(vm);
  return terms;
}

// capacity.csv's points: every point evaluated, by its GPUs.
CapacityPoints layout_capacity_points(const std::vector<SearchedPoint>& evaluated) {
  CapacityPoints points;
  points.keys = {"kind",      "hardware",  "tp",
                 "pp",        "replicas",  "decode_hardware",
                 "decode_tp", "decode_pp", "decode_replicas"};
  points.x_label = "GPUs";
  for (const SearchedPoint& e : evaluated)
    points.add(e.keys, *e.summary, *e.verdict, static_cast<double>(e.gpus));
  return points;
}

}  // namespace

int search_layouts(CapacityStudy& study, const po::variables_map& vm) {
  const LayoutSearchTerms terms = parse_layout_search(study, vm);
  const bool write_configs = study_out_dir(vm).has_value();
  const LayoutStudy answer = search_layout_study(study, terms, write_configs);
  if (!study.context.processes.leader()) return 0;
  // No aggregated shape fits or starts: then no layout of them does either (rate matching
  // finds a role that cannot be served).
  std::vector<ShapePoints> shape_points;
  for (const LayoutDeployment& d : answer.deployments) {
    if (d.kind != "aggregated") continue;
    ShapePoints& points = shape_points.emplace_back(ShapePoints{d.label, {}});
    for (const SearchedPoint& e : answer.evaluated) {
      if (e.keys.front() == "aggregated" && e.label == d.label)
        points.summaries.push_back(e.summary);
    }
  }
  if (const auto unfit = no_shape_fits(shape_points)) return refuse_unfit_shapes(study, *unfit);
  publish_capacity(study, vm, layout_capacity_points(answer.evaluated), answer.document,
                   answer.front.config_files);
  if (vm.count("json") != 0) {
    study.context.out << answer.document.dump(2) << '\n';
  } else {
    print_layouts_report(study.context.out,
                         {terms.rate_per_s, terms.by_cost, answer.deployments, answer.evaluated,
                          answer.best, answer.searched_any, answer.front, write_configs});
  }
  if (!answer.best[0] && !answer.best[1]) {
    study.context.err << "servesim: error: no deployment meets the SLO at "
                      << rate_text(terms.rate_per_s) << " req/s with up to " << terms.max_replicas
                      << " replicas per role\n";
    return exit_code_for(ErrorKind::Infeasible);
  }
  return 0;
}

}  // namespace servesim::cli
