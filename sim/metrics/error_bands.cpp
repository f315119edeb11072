#include "sim/metrics/error_bands.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/latency_stats.h"

namespace servesim {
namespace {

std::string signed_percent(double fraction) {
  const double percent = std::round(100 * fraction) + 0.0;  // no "-0"
  return (percent >= 0 ? "+" : "") + format_fixed(percent, 0) + "%";
}

// The scopes band_for tries, narrowest first: which of the class's fields a residual must
// share with the deployment (engine and GPU class always).
struct Scope {
  bool family;
  bool regime;
  const char* name;  // completes "from N points of this ..."
};
constexpr std::array<Scope, 3> kScopes{{
    {true, true, kClassScope},
    {true, false, "engine, GPU class and model family"},
    {false, false, "engine and GPU class"},
}};

bool in_scope(const DeploymentClass& residual, const DeploymentClass& deployment,
              const Scope& scope) {
  return residual.engine == deployment.engine &&
         residual.hardware_class == deployment.hardware_class &&
         (!scope.family || residual.model_family == deployment.model_family) &&
         (!scope.regime || residual.regime == deployment.regime);
}

nlohmann::json class_to_json(const DeploymentClass& c) {
  return {{"engine", c.engine},
          {"hardware_class", c.hardware_class},
          {"model_family", c.model_family},
          {"regime", c.regime}};
}

DeploymentClass class_from(JsonObjectReader r) {
  DeploymentClass c;
  c.engine = r.string("engine");
  c.hardware_class = r.string("hardware_class");
  c.model_family = r.string("model_family");
  c.regime = r.string("regime");
  r.reject_unknown_keys();
  return c;
}

}  // namespace

std::string load_regime(double in_flight_requests) {
  if (in_flight_requests < kBatchedInFlight) return "light";
  if (in_flight_requests < kWideInFlight) return "batched";
  return "wide";
}

std::pair<double, double> band_percentiles(std::vector<double> ratios) {
  if (ratios.empty()) throw InvariantError("band_percentiles: no ratios");
  std::sort(ratios.begin(), ratios.end());
  return {percentile_of_sorted(ratios, 0.1) - 1.0, percentile_of_sorted(ratios, 0.9) - 1.0};
}

std::string ErrorBand::range() const {
  return signed_percent(low) + "/" + signed_percent(high);
}

std::string ErrorBand::text() const {
  return "(" + range() + ", from " + std::to_string(points) + " points of this " + scope + ")";
}

std::string BandLookup::text(BandMetric m) const {
  if (const auto& band = (*this)[m]) return band->text();
  return "(no error band: " +
         (uncovered.empty() ? std::string("too few validated points of this metric") : uncovered) +
         ")";
}

BandLookup ErrorBands::band_for(const DeploymentClass& deployment,
                                double in_flight_requests) const {
  BandLookup lookup;
  lookup.deployment = deployment;
  lookup.in_flight_requests = in_flight_requests;
  for (std::size_t m = 0; m < kBandMetricCount; ++m) {
    for (const Scope& scope : kScopes) {
      std::vector<double> ratios;
      for (const BandResidual& r : residuals_) {
        if (r.measured_over_predicted[m] && in_scope(r.deployment, deployment, scope)) {
          ratios.push_back(*r.measured_over_predicted[m]);
        }
      }
      if (ratios.size() < kMinBandPoints) continue;
      const auto [low, high] = band_percentiles(ratios);
      lookup.bands[m] = ErrorBand{low, high, ratios.size(), scope.name};
      break;
    }
  }
  if (std::any_of(lookup.bands.begin(), lookup.bands.end(),
                  [](const auto& b) { return b.has_value(); })) {
    return lookup;
  }
  std::set<std::string> classes;
  for (const BandResidual& r : residuals_) {
    if (r.deployment.engine == deployment.engine) classes.insert(r.deployment.hardware_class);
  }
  if (classes.empty()) {
    lookup.uncovered = "no calibration of engine " + deployment.engine + " ships";
    return lookup;
  }
  if (classes.count(deployment.hardware_class) != 0) {
    lookup.uncovered = "fewer than " + std::to_string(kMinBandPoints) + " validated points of " +
                       deployment.engine + " on " + deployment.hardware_class + " GPUs";
    return lookup;
  }
  std::string list;
  for (const std::string& c : classes)
    list += (list.empty() ? "" : ", ") + c;
  lookup.uncovered = "no calibration covers " + deployment.engine + " on " +
                     deployment.hardware_class + " GPUs (validated on " + list + ")";
  return lookup;
}

nlohmann::json ErrorBands::to_json() const {
  nlohmann::json residuals = nlohmann::json::array();
  for (const BandResidual& r : residuals_) {
    nlohmann::json ratios = nlohmann::json::object();
    for (std::size_t m = 0; m < kBandMetricCount; ++m) {
      if (r.measured_over_predicted[m])
        ratios[std::string(kBandMetricNames[m])] = *r.measured_over_predicted[m];
    }
    residuals.push_back({{"where", r.where},
                         {"model", r.model},
                         {"hardware", r.hardware},
                         {"deployment", class_to_json(r.deployment)},
                         {"in_flight_requests", r.in_flight_requests},
                         {"measured_over_predicted", ratios}});
  }
  return {{"basis",
           "measured / predicted per validated point not measured overloaded (servesim "
           "validate --measured FILE... --write-bands DIR); docs/validation.md, Error bands"},
          {"files", files_},
          {"residuals", residuals}};
}

ErrorBands ErrorBands::from_json(const nlohmann::json& document, const std::string& source) {
  JsonObjectReader r(document, source);
  r.ignore("basis");
  ErrorBands bands;
  const auto array_at = [&](std::string_view key) -> const nlohmann::json& {
    const nlohmann::json* value = r.optional_raw(key);
    if (value == nullptr || !value->is_array()) r.fail(key, "expected an array");
    return *value;
  };
  for (const nlohmann::json& file : array_at("files")) {
    if (!file.is_string()) r.fail("files", "expected an array of file names");
    bands.files_.push_back(file.get<std::string>());
  }
  const nlohmann::json& residuals = array_at("residuals");
  for (std::size_t i = 0; i < residuals.size(); ++i) {
    const std::string path = "residuals[" + std::to_string(i) + "]";
    if (!residuals[i].is_object()) r.fail(path, "expected an object");
    JsonObjectReader e(residuals[i], source, path);
    BandResidual residual;
    residual.where = e.string("where");
    residual.model = e.string("model");
    residual.hardware = e.string("hardware");
    residual.deployment = class_from(e.object("deployment"));
    residual.in_flight_requests = e.optional_nonnegative_number("in_flight_requests").value_or(0);
    JsonObjectReader ratios = e.object("measured_over_predicted");
    for (std::size_t m = 0; m < kBandMetricCount; ++m)
      residual.measured_over_predicted[m] = ratios.optional_positive_number(kBandMetricNames[m]);
    ratios.reject_unknown_keys();
    e.reject_unknown_keys();
    bands.residuals_.push_back(std::move(residual));
  }
  r.reject_unknown_keys();
  return bands;
}

BandLookup band_lookup_from_json(const nlohmann::json& document) {
  BandLookup lookup;
  const nlohmann::json& d = document.at("deployment");
  lookup.deployment = {d.at("engine").get<std::string>(), d.at("hardware_class").get<std::string>(),
                       d.at("model_family").get<std::string>(), d.at("regime").get<std::string>()};
  lookup.in_flight_requests = document.at("in_flight_requests").get<double>();
  lookup.uncovered = document.value("uncovered", "");
  for (std::size_t m = 0; m < kBandMetricCount; ++m) {
    const auto band = document.find(std::string(kBandMetricNames[m]));
    if (band == document.end()) continue;
    lookup.bands[m] =
        ErrorBand{band->at("low").get<double>(), band->at("high").get<double>(),
                  band->at("points").get<std::size_t>(), band->at("scope").get<std::string>()};
  }
  return lookup;
}

nlohmann::json band_lookup_to_json(const BandLookup& lookup) {
  nlohmann::json out = {{"deployment", class_to_json(lookup.deployment)},
                        {"in_flight_requests", lookup.in_flight_requests}};
  if (!lookup.uncovered.empty()) out["uncovered"] = lookup.uncovered;
  for (std::size_t m = 0; m < kBandMetricCount; ++m) {
    if (const auto& b = lookup.bands[m]) {
      out[std::string(kBandMetricNames[m])] = {
          {"low", b->low}, {"high", b->high}, {"points", b->points}, {"scope", b->scope}};
    }
  }
  return out;
}

}  // namespace servesim
