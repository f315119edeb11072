#include "sim/study/point_outcome.h"

#include <exception>
#include <string>

#include "sim/core/error.h"

namespace servesim {
namespace {

nlohmann::json error_outcome(ErrorKind kind, const std::string& message) {
  return {{"error", {{"kind", static_cast<int>(kind)}, {"message", message}}}};
}

}  // namespace

nlohmann::json capture_point(const PointEvaluation& point, std::size_t index) {
  try {
    return {{"result", point(index)}};
  } catch (const Error& error) {
    return error_outcome(error.kind(), error.what());
  } catch (const std::exception& error) {
    return error_outcome(ErrorKind::Internal, error.what());
  }
}

std::vector<nlohmann::json> unwrap_points(std::vector<nlohmann::json> outcomes) {
  std::vector<nlohmann::json> results;
  results.reserve(outcomes.size());
  for (auto& outcome : outcomes) {
    if (outcome.contains("error")) {
      const auto& error = outcome["error"];
      throw Error(static_cast<ErrorKind>(error["kind"].get<int>()),
                  error["message"].get<std::string>());
    }
    results.push_back(std::move(outcome["result"]));
  }
  return results;
}

}  // namespace servesim
