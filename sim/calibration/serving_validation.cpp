#include "sim/calibration/serving_validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "sim/calibration/error_stats.h"
#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"

namespace servesim {
namespace {

std::optional<std::int64_t> stage_of(const ServingPoint& p) {
  if (const auto* s = std::get_if<LoadStage>(&p.workload)) return s->stage;
  return std::nullopt;
}

std::string rate_text(const ServingPoint& p) {
  const auto rate = p.rate_per_s();
  if (!rate) return "";
  if (std::isinf(*rate)) return "inf";
  return format_9_digits(*rate);
}

std::string optional_text(const std::optional<double>& value) {
  return value ? format_9_digits(*value) : std::string();
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json stats_to_json(const RelativeErrorStats& s) {
  return {{"count", s.count},
          {"mape", s.mape},
          {"median_ape", s.median_ape},
          {"max_ape", s.max_ape},
          {"bias", s.bias}};
}

}  // namespace

RelativeErrorStats relative_error_stats(
    const std::vector<std::pair<double, double>>& predicted_measured) {
  std::vector<std::pair<double, double>> normalized;
  normalized.reserve(predicted_measured.size());
  for (const auto& [predicted, measured] : predicted_measured)
    normalized.emplace_back(predicted / measured, 1.0);
  const ErrorStats s = error_stats(normalized);
  // With every measurement 1, each absolute error is the relative one.
  return {s.count, s.mape, s.median_abs_error_s, s.max_ape, s.bias};
}

ServingValidation validate_serving(const std::vector<ServingRun>& runs,
                                   const ServingPredictor& predict) {
  std::vector<PointComparison> points;
  for (const ServingRun& run : runs) {
    if (run.points.empty()) continue;
    std::string reason;
    std::vector<ServingMetrics> predicted;
    for (const ServingPoint& p : run.points) {
      if (!p.unsupported.empty()) reason = "not modelled: " + p.unsupported;
    }
    try {
      if (reason.empty()) predicted = predict(run);
    } catch (const InfeasibleError& e) {
      reason = std::string("not served: ") + e.what();
    }
    if (reason.empty() && predicted.size() != run.points.size()) {
      throw InvariantError("serving prediction: " + std::to_string(predicted.size()) +
                           " results for " + std::to_string(run.points.size()) + " points");
    }
    for (std::size_t k = 0; k < run.points.size(); ++k) {
      PointComparison c;
      c.point = run.points[k];
      c.not_predicted = reason;
      for (std::size_t m = 0; m < kServingMetricCount; ++m) {
        const auto& measured = c.point.measured.values[m];
        if (!measured) continue;
        MetricComparison mc;
        mc.metric = static_cast<ServingMetric>(m);
        mc.measured = *measured;
        if (reason.empty()) {
          mc.predicted = predicted[k].values[m];
          if (mc.predicted && *measured != 0) {
            mc.relative_error = (*mc.predicted - *measured) / *measured;
          }
        }
        c.metrics.push_back(mc);
      }
      if (reason.empty()) {
        c.predicted_overloaded = predicted[k].overloaded;
        c.predicted_in_flight_requests = predicted[k].in_flight_requests;
        c.deployment = predicted[k].deployment;
      }
      points.push_back(std::move(c));
    }
  }
  return summarize_serving(std::move(points));
}

std::map<std::string, ErrorBands> error_bands_of(const ServingValidation& validation) {
  // The measured metrics each band metric takes, the first one a point has.
  const std::array<std::vector<ServingMetric>, kBandMetricCount> sources{{
      {ServingMetric::TtftMs},
      {ServingMetric::TpotMs, ServingMetric::ItlMs},
      {ServingMetric::E2eMs},
      {ServingMetric::OutputTokensPerS, ServingMetric::OutputTokensPerSPerGpu,
       ServingMetric::TotalTokensPerS},
  }};
  std::map<std::string, ErrorBands> bands;
  for (const PointComparison& c : validation.points) {
    if (!c.predicted() || c.measured_overloaded()) continue;
    BandResidual r;
    r.deployment = c.deployment;
    // The file's name alone: the residuals ship, and a path would name the machine.
    const std::string file = std::filesystem::path(c.point.source).filename().string();
    r.where = c.point.row > 0 ? file + " row " + std::to_string(c.point.row) : file;
    r.model = c.point.model.empty() ? c.point.model_name : c.point.model;
    r.hardware = c.point.hardware;
    r.in_flight_requests = c.predicted_in_flight_requests;
    bool any = false;
    for (std::size_t b = 0; b < kBandMetricCount; ++b) {
      for (const ServingMetric source : sources[b]) {
        const auto m =
            std::find_if(c.metrics.begin(), c.metrics.end(),
                         [&](const MetricComparison& mc) { return mc.metric == source; });
        if (m == c.metrics.end() || !m->predicted || !(*m->predicted > 0) || !(m->measured > 0))
          continue;
        r.measured_over_predicted[b] = m->measured / *m->predicted;
        any = true;
        break;
      }
    }
    if (!any) continue;
    ErrorBands& engine = bands[r.deployment.engine];
    if (std::find(engine.files().begin(), engine.files().end(), file) == engine.files().end())
      engine.files().push_back(file);
    engine.add(std::move(r));
  }
  return bands;
}

ServingValidation summarize_serving(std::vector<PointComparison> points) {
  ServingValidation v;
  std::vector<std::vector<std::pair<double, double>>> pairs(kServingMetricCount);
  std::vector<bool> measured_anywhere(kServingMetricCount, false);
  for (PointComparison& c : points) {
    for (const MetricComparison& mc : c.metrics)
      measured_anywhere[static_cast<std::size_t>(mc.metric)] = true;
    if (c.predicted()) {
      if (c.measured_overloaded()) {
        ++v.measured_overloaded;
        if (c.predicted_overloaded) ++v.overloaded_predicted_overloaded;
      } else {
        if (c.predicted_overloaded) ++v.normal_predicted_overloaded;
        for (const MetricComparison& mc : c.metrics) {
          if (mc.relative_error) {
            pairs[static_cast<std::size_t>(mc.metric)].emplace_back(*mc.predicted, mc.measured);
          }
        }
      }
    } else {
      ++v.not_predicted;
    }
    v.points.push_back(std::move(c));
  }
  for (std::size_t m = 0; m < kServingMetricCount; ++m) {
    if (measured_anywhere[m]) {
      v.metrics.emplace_back(static_cast<ServingMetric>(m), relative_error_stats(pairs[m]));
    }
  }
  return v;
}

std::string serving_validation_csv(const ServingValidation& v) {
  std::string text =
      "source,row,model,hardware,tp,pp,engine,workload,stage,rate_per_s,metric,measured,"
      "predicted,relative_error,measured_overloaded,predicted_overloaded,note\n";
  for (const PointComparison& c : v.points) {
    const ServingPoint& p = c.point;
    const auto stage = stage_of(p);
    const std::string prefix =
        csv_field(p.source) + "," + (p.row != 0 ? std::to_string(p.row) : "") + "," +
        csv_field(p.model_name) + "," + csv_field(p.hardware) + "," + std::to_string(p.tp) + "," +
        std::to_string(p.pp) + "," + csv_field(p.engine.value_or("")) + "," +
        csv_field(p.workload_label()) + "," + (stage ? std::to_string(*stage) : "") + "," +
        rate_text(p) + ",";
    const std::string overloaded = std::string(c.measured_overloaded() ? "1" : "0") + "," +
                                   (c.predicted() ? (c.predicted_overloaded ? "1" : "0") : "");
    if (!c.predicted() || c.metrics.empty()) {
      text += prefix + ",,,," + overloaded + "," + csv_field(c.not_predicted) + "\n";
      continue;
    }
    for (const MetricComparison& m : c.metrics) {
      text += prefix + std::string(serving_metric_name(m.metric)) + "," +
              format_9_digits(m.measured) + "," + optional_text(m.predicted) + "," +
              optional_text(m.relative_error) + "," + overloaded + ",\n";
    }
  }
  return text;
}

nlohmann::json serving_validation_to_json(const ServingValidation& v) {
  nlohmann::json points = nlohmann::json::array();
  for (const PointComparison& c : v.points) {
    const ServingPoint& p = c.point;
    nlohmann::json metrics = nlohmann::json::object();
    for (const MetricComparison& m : c.metrics) {
      metrics[std::string(serving_metric_name(m.metric))] = {
          {"measured", m.measured},
          {"predicted", optional_json(m.predicted)},
          {"relative_error", optional_json(m.relative_error)}};
    }
    const auto stage = stage_of(p);
    const auto rate = p.rate_per_s();
    nlohmann::json point = {
        {"source", p.source},
        {"row", p.row},
        {"model", p.model_name},
        {"hardware", p.hardware},
        {"tp", p.tp},
        {"pp", p.pp},
        {"engine", p.engine ? nlohmann::json(*p.engine) : nlohmann::json(nullptr)},
        {"workload", p.workload_label()},
        {"stage", stage ? nlohmann::json(*stage) : nlohmann::json(nullptr)},
        {"rate_per_s", !rate               ? nlohmann::json(nullptr)
                       : std::isinf(*rate) ? nlohmann::json("inf")
                                           : nlohmann::json(*rate)},
        {"measured_overloaded", c.measured_overloaded()},
        {"predicted_overloaded",
         c.predicted() ? nlohmann::json(c.predicted_overloaded) : nlohmann::json(nullptr)},
        {"metrics", metrics}};
    if (!c.predicted()) point["note"] = c.not_predicted;
    points.push_back(std::move(point));
  }
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [metric, stats] : v.metrics)
    metrics[std::string(serving_metric_name(metric))] = stats_to_json(stats);
  return {{"points", points},
          {"metrics", metrics},
          {"overloaded",
           {{"measured", v.measured_overloaded},
            {"measured_and_predicted", v.overloaded_predicted_overloaded},
            {"predicted_only", v.normal_predicted_overloaded}}},
          {"not_predicted", v.not_predicted}};
}

}  // namespace servesim
