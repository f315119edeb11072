#pragma once

#include "sim/study/point_executor.h"

namespace servesim {

// Evaluates points on `jobs` threads that take the next unclaimed index until none is left;
// with one job, in order on the calling thread.
class ThreadPointExecutor final : public IPointExecutor {
 public:
  explicit ThreadPointExecutor(int jobs);
  std::vector<nlohmann::json> evaluate(std::size_t count, const PointEvaluation& point,
                                       ProgressMeter* progress) override;
  // The same, with each point's error captured instead of thrown (see point_outcome.h).
  std::vector<nlohmann::json> evaluate_captured(std::size_t count, const PointEvaluation& point,
                                                ProgressMeter* progress) const;

 private:
  int jobs_;
};

}  // namespace servesim
