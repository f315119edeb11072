#pragma once

#include <filesystem>
#include <vector>

#include "sim/calibration/serving_fields.h"
#include "sim/calibration/serving_point.h"

namespace servesim {

// Reads a CSV of measured serving points in the format of docs/validation.md: serving under
// load, static batches or a burst, told by the header's measured columns. Columns the file
// lacks come from `setup` (may be null); errors name the file, the row and the column.
std::vector<ServingPoint> read_csv_points(const std::filesystem::path& file,
                                          const ServingPointOptions& options,
                                          const serving_fields::Setup* setup);

}  // namespace servesim
