#pragma once

#include <span>
#include <string>

#include "sim/calibration/measurement.h"

namespace servesim {

// `servesim validate --measurements ... --csv`: one row per measured operator record with the
// profile's prediction, for analyses that need the records rather than the per-class summary
// (per record: its source, class, shape, how it was timed, measured and predicted seconds and
// the relative error, predicted / measured - 1). `predicted_s` holds one figure per record.
std::string operator_predictions_csv(std::span<const Measurement> records,
                                     std::span<const double> predicted_s);

}  // namespace servesim
