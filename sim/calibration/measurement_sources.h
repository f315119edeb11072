#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/calibration/measurement.h"

namespace servesim {

// Measurements from files and folders: a .json file is a servesim-measurements file, a .csv
// file a vidur table (import_vidur_csv); a folder contributes every such file below it
// (CSV files that are not vidur tables are skipped there, refused when named directly).
// `device` labels imported vidur records; empty: taken from the vidur path (compute/a100/...).
struct LoadedMeasurements {
  std::vector<Measurement> records;
  std::vector<std::string> files;  // as recorded in a profile: see data_relative_path
};
LoadedMeasurements load_measurements(const std::vector<std::filesystem::path>& inputs,
                                     const std::string& device = "");

// The inputs of `calibrate` and `validate`: files and folders, plus, when `vidur_root` is
// not empty, the vidur tables of `device` under it (vidur_files_for_device). Refuses
// a selection that names nothing.
LoadedMeasurements load_measurement_inputs(std::vector<std::filesystem::path> inputs,
                                           const std::filesystem::path& vidur_root,
                                           const std::string& device);

// The path from its "profiles/..." component on (how the shared data tree names its files),
// so that a calibrated profile names no machine-specific folder; other paths unchanged.
std::string data_relative_path(const std::filesystem::path& path);

}  // namespace servesim
