#include "sim/study/thread_point_executor.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "sim/core/error.h"
#include "sim/study/point_outcome.h"
#include "sim/study/progress_meter.h"

namespace servesim {

ThreadPointExecutor::ThreadPointExecutor(int jobs) : jobs_(jobs) {
  if (jobs < 1) throw UsageError("-j: expected at least 1 job, got " + std::to_string(jobs));
}

std::vector<nlohmann::json> ThreadPointExecutor::evaluate(std::size_t count,
                                                          const PointEvaluation& point,
                                                          ProgressMeter* progress) {
  return unwrap_points(evaluate_captured(count, point, progress));
}

std::vector<nlohmann::json> ThreadPointExecutor::evaluate_captured(std::size_t count,
                                                                   const PointEvaluation& point,
                                                                   ProgressMeter* progress) const {
  std::vector<nlohmann::json> outcomes(count);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      outcomes[i] = capture_point(point, i);
      if (progress != nullptr) progress->point_done();
    }
  };
  const auto threads = std::min<std::size_t>(static_cast<std::size_t>(jobs_), count);
  if (threads <= 1) {
    work();
    return outcomes;
  }
  std::vector<std::jthread> pool;
  pool.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back(work);
  pool.clear();  // joins
  return outcomes;
}

}  // namespace servesim
