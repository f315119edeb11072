#include "sim/calibration/error_stats.h"

#include <algorithm>
#include <cmath>

namespace servesim {

void ErrorTable::add(const std::string& class_name, double predicted_s, double measured_s) {
  pairs_[class_name].emplace_back(predicted_s, measured_s);
}

std::map<std::string, ErrorStats> ErrorTable::summarize() const {
  std::map<std::string, ErrorStats> out;
  for (const auto& [name, pairs] : pairs_)
    out.emplace(name, error_stats(pairs));
  return out;
}

ErrorStats error_stats(const std::vector<std::pair<double, double>>& predicted_measured) {
  ErrorStats s;
  s.count = predicted_measured.size();
  if (s.count == 0) return s;
  std::vector<double> abs_errors;
  abs_errors.reserve(s.count);
  for (const auto& [predicted, measured] : predicted_measured) {
    const double error = predicted - measured;
    const double relative = error / measured;
    s.mape += std::fabs(relative);
    s.bias += relative;
    s.max_ape = std::max(s.max_ape, std::fabs(relative));
    s.max_abs_error_s = std::max(s.max_abs_error_s, std::fabs(error));
    abs_errors.push_back(std::fabs(error));
  }
  const double n = static_cast<double>(s.count);
  s.mape /= n;
  s.bias /= n;
  const std::size_t mid = abs_errors.size() / 2;
  std::nth_element(abs_errors.begin(), abs_errors.begin() + static_cast<std::ptrdiff_t>(mid),
                   abs_errors.end());
  s.median_abs_error_s = abs_errors[mid];
  if (abs_errors.size() % 2 == 0) {
    const double below = *std::max_element(abs_errors.begin(),
                                           abs_errors.begin() + static_cast<std::ptrdiff_t>(mid));
    s.median_abs_error_s = (s.median_abs_error_s + below) / 2;
  }
  return s;
}

nlohmann::json error_stats_to_json(const ErrorStats& s) {
  return {{"count", s.count},
          {"mape", s.mape},
          {"max_ape", s.max_ape},
          {"median_abs_error_s", s.median_abs_error_s},
          {"max_abs_error_s", s.max_abs_error_s},
          {"bias", s.bias}};
}

}  // namespace servesim
