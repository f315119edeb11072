#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// How far predictions are from measurements over one class of records.
struct ErrorStats {
  std::size_t count = 0;
  double mape = 0;                // mean |predicted - measured| / measured, a fraction
  double max_ape = 0;             // largest |predicted - measured| / measured
  double median_abs_error_s = 0;  // median |predicted - measured|, seconds
  double max_abs_error_s = 0;
  double bias = 0;  // mean (predicted - measured) / measured: > 0 predicts too slow
};

// Collects (predicted, measured) pairs per class name and summarises them.
class ErrorTable {
 public:
  void add(const std::string& class_name, double predicted_s, double measured_s);
  // Per class, sorted by name.
  std::map<std::string, ErrorStats> summarize() const;
  bool empty() const noexcept { return pairs_.empty(); }

 private:
  std::map<std::string, std::vector<std::pair<double, double>>> pairs_;
};

ErrorStats error_stats(const std::vector<std::pair<double, double>>& predicted_measured);
nlohmann::json error_stats_to_json(const ErrorStats& stats);

}  // namespace servesim
