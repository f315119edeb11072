#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// Error bands (docs/validation.md, "Error bands"): how far real engines were from servesim's
// predictions on the measured points `validate` checked, kept per deployment class and
// applied to a new prediction of the same class. A band is the 10th to the 90th percentile
// of measured / predicted - 1 over the class's points: the measured value of eight in ten
// such deployments lay between prediction x (1 + low) and prediction x (1 + high).

// The figures a band is kept for, and what each covers in a run's headline: ttft every TTFT
// statistic, tpot TPOT and ITL, e2e the end-to-end latency, throughput the token rates.
enum class BandMetric { Ttft, Tpot, E2e, Throughput };
inline constexpr std::size_t kBandMetricCount = 4;
inline constexpr std::array<std::string_view, kBandMetricCount> kBandMetricNames{
    "ttft", "tpot", "e2e", "throughput"};
inline constexpr std::string_view band_metric_name(BandMetric m) {
  return kBandMetricNames[static_cast<std::size_t>(m)];
}

// Load regimes by the mean number of requests in flight (Little's law: completed requests per
// second x mean E2E): "light" below 16, "batched" below 256, "wide" from 256.
inline constexpr double kBatchedInFlight = 16;
inline constexpr double kWideInFlight = 256;
std::string load_regime(double in_flight_requests);

// What a band is looked up by: the engine profile's name, the GPU class (the hardware
// profile's architecture: "ampere", "hopper", "blackwell"), the model family ("dense", "moe"
// or "mla") and the load regime.
struct DeploymentClass {
  std::string engine;
  std::string hardware_class;
  std::string model_family;
  std::string regime;
  bool operator==(const DeploymentClass&) const = default;
};

// One validated point: its class, where it came from, and measured / predicted per metric
// (empty where the point has no such figure).
struct BandResidual {
  DeploymentClass deployment;
  std::string where;  // "vllm-0.15.1-h100-sxm.csv row 3"
  std::string model;
  std::string hardware;
  double in_flight_requests = 0;  // predicted, which set the regime
  std::array<std::optional<double>, kBandMetricCount> measured_over_predicted{};
};

// A band needs this many points of its scope; a narrower scope with fewer gives way to the
// next wider one (ErrorBands::band_for).
inline constexpr std::size_t kMinBandPoints = 5;

// The narrowest scope: every field of the deployment's class.
inline constexpr const char* kClassScope = "engine, GPU class, model family and load";

struct ErrorBand {
  double low = 0;   // measured / predicted - 1 at the 10th percentile
  double high = 0;  // ... at the 90th
  std::size_t points = 0;
  // The class the points share with the deployment: "engine, GPU class, model family and
  // load", "engine, GPU class and model family" or "engine and GPU class".
  std::string scope;
  // "-6%/+14%"
  std::string range() const;
  // "(-6%/+14%, from 90 points of this engine and GPU class)"
  std::string text() const;
};

// The bands of one prediction: per metric, or why none applies.
struct BandLookup {
  DeploymentClass deployment;
  double in_flight_requests = 0;
  std::array<std::optional<ErrorBand>, kBandMetricCount> bands{};
  // Set when no band applies to any metric: which calibration is missing.
  std::string uncovered;
  const std::optional<ErrorBand>& operator[](BandMetric m) const {
    return bands[static_cast<std::size_t>(m)];
  }
  // "(-6%/+14%, from 90 points of ...)", or why there is none: "(no error band: ...)".
  std::string text(BandMetric m) const;
};

// The 10th and 90th percentiles (linear interpolation between order statistics) of
// `ratios` - 1; `ratios` must not be empty.
std::pair<double, double> band_percentiles(std::vector<double> ratios);

// The residuals of one engine profile's validation (engines/bands/<engine>.json).
class ErrorBands {
 public:
  void add(BandResidual residual) { residuals_.push_back(std::move(residual)); }
  const std::vector<BandResidual>& residuals() const { return residuals_; }
  std::vector<std::string>& files() { return files_; }
  const std::vector<std::string>& files() const { return files_; }

  // The band of each metric for `deployment`, from the residuals of the narrowest scope that
  // has at least kMinBandPoints of that metric: engine, GPU class, model family and regime;
  // then without the regime; then engine and GPU class alone. None across GPU classes or
  // engines: `uncovered` says what no calibration covers.
  BandLookup band_for(const DeploymentClass& deployment, double in_flight_requests) const;

  nlohmann::json to_json() const;
  // Reads what to_json writes; errors (InputError) name `source` and the field.
  static ErrorBands from_json(const nlohmann::json& document, const std::string& source);

 private:
  std::vector<std::string> files_;  // the measured files the residuals came from
  std::vector<BandResidual> residuals_;
};

// {"deployment": {...}, "in_flight_requests": N, "ttft": {"low", "high", "points", "scope"},
// ...} or {"deployment": {...}, "uncovered": REASON}: summary.json's "error_bands".
nlohmann::json band_lookup_to_json(const BandLookup& lookup);
// Reads what band_lookup_to_json wrote (a summary's own "error_bands").
BandLookup band_lookup_from_json(const nlohmann::json& document);

}  // namespace servesim
