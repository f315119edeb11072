#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/serving_metrics.h"
#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_runs.h"

namespace servesim {

// Predicts every point of a run (one ServingMetrics per point, in order). May throw
// InfeasibleError for a run that cannot be served: the points are then reported as not
// predicted, with the reason.
using ServingPredictor = std::function<std::vector<ServingMetrics>(const ServingRun&)>;

struct MetricComparison {
  ServingMetric metric = ServingMetric::TtftMs;
  double measured = 0;
  std::optional<double> predicted;
  std::optional<double> relative_error;  // (predicted - measured) / measured
};

struct PointComparison {
  ServingPoint point;
  std::string not_predicted;  // why there is no prediction (the deployment is infeasible)
  bool predicted_overloaded = false;
  // The prediction's requests in flight and deployment class (ServingMetrics).
  double predicted_in_flight_requests = 0;
  DeploymentClass deployment;
  std::vector<MetricComparison> metrics;  // every metric measured for the point, in enum order
  bool measured_overloaded() const { return point.measured.overloaded; }
  bool predicted() const { return not_predicted.empty(); }
};

// Relative errors over a set of points: fractions, > 0 when the prediction is too high.
struct RelativeErrorStats {
  std::size_t count = 0;
  double mape = 0;        // mean |error|
  double median_ape = 0;  // median |error|
  double max_ape = 0;     // largest |error|
  double bias = 0;        // mean signed error
};

// error_stats on (predicted / measured, 1): the same MAPE, maximum and bias, and the median of
// the relative errors rather than of absolute ones, since the metrics differ in units.
RelativeErrorStats relative_error_stats(
    const std::vector<std::pair<double, double>>& predicted_measured);

struct ServingValidation {
  std::vector<PointComparison> points;  // in the order of the runs and their stages
  // Per metric, over the predicted points not measured overloaded (those describe only the
  // requests that completed before the client gave up), in enum order; metrics nobody measured
  // are left out.
  std::vector<std::pair<ServingMetric, RelativeErrorStats>> metrics;
  std::size_t measured_overloaded = 0;              // predicted points measured overloaded
  std::size_t overloaded_predicted_overloaded = 0;  // ... of which predicted overloaded too
  std::size_t normal_predicted_overloaded = 0;      // points not measured overloaded, predicted so
  std::size_t not_predicted = 0;
};

// Compares each point of `runs` with its prediction. A run whose deployment cannot be served
// (the predictor's InfeasibleError) is reported with the reason and not predicted.
ServingValidation validate_serving(const std::vector<ServingRun>& runs,
                                   const ServingPredictor& predict);
// The counts and per-metric statistics of compared points (what validate_serving returns for
// its points): to combine points predicted in several passes.
ServingValidation summarize_serving(std::vector<PointComparison> points);

// The residuals error bands are kept from (sim/metrics/error_bands.h), of every predicted
// point not measured overloaded: measured / predicted of TTFT (ttft_ms_mean), TPOT
// (tpot_ms_mean, else itl_ms_mean), E2E (e2e_ms_mean) and throughput (output_tokens_per_s,
// else output_tokens_per_s_per_gpu, else total_tokens_per_s), per engine.
std::map<std::string, ErrorBands> error_bands_of(const ServingValidation& validation);

// One row per point and measured metric (a point not predicted: one row, its reason in
// `note`), header first: source,row,model,hardware,tp,pp,engine,workload,stage,rate_per_s,
// metric,measured,predicted,relative_error,measured_overloaded,predicted_overloaded,note.
std::string serving_validation_csv(const ServingValidation& validation);

// {"points": [...], "metrics": {name: stats}, "overloaded": {...}}.
nlohmann::json serving_validation_to_json(const ServingValidation& validation);

}  // namespace servesim
