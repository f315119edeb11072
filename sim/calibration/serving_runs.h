#pragma once

#include <vector>

#include "sim/calibration/serving_point.h"

namespace servesim {

// Points of one file that run back to back in one simulation: the load stages of one model,
// TP and workload with consecutive stage numbers (stage k + 1 starts with what stage k left in
// flight), or a single point.
struct ServingRun {
  std::vector<ServingPoint> points;  // in stage order
};

// Groups the points of one file into runs (see ServingRun), in the order of each run's first
// row. Two rows of one run with the same stage number are an InputError naming both; so is a
// stage whose deployment (hardware, engine, knobs, pp) or shared-prefix shape differs from the
// stage before.
std::vector<ServingRun> group_serving_runs(std::vector<ServingPoint> points);

}  // namespace servesim
