#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/study/process_group.h"

namespace servesim {

class ProgressMeter;

// Evaluates one point of a study (a simulation, usually) and returns its result. It must
// depend on the index alone, so that where and in which order points run cannot change it.
using PointEvaluation = std::function<nlohmann::json(std::size_t index)>;

// Runs the points of a study: in this thread, on a pool of threads, or spread over the
// ranks of an MPI job. Results are the same in every case.
class IPointExecutor {
 public:
  virtual ~IPointExecutor() = default;
  // Evaluates points 0..count-1 and returns their results in index order (on every rank).
  // When points fail, all points still run and then the error of the lowest failing index
  // is rethrown with its kind, so the reported error does not depend on scheduling.
  virtual std::vector<nlohmann::json> evaluate(std::size_t count, const PointEvaluation& point,
                                               ProgressMeter* progress) = 0;
};

// `jobs` threads per process (at least 1); over the ranks of `processes` when it has more
// than one (a build with SERVESIM_MPI).
std::unique_ptr<IPointExecutor> make_point_executor(int jobs, const ProcessGroup& processes);

}  // namespace servesim
