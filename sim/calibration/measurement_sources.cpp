#include "sim/calibration/measurement_sources.h"

#include <algorithm>

#include "sim/calibration/vidur_import.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

// a100 from .../compute/a100/..., .../attention_history/a100/..., .../network/a100_dgx/...
std::string device_from_path(const fs::path& path) {
  std::string previous;
  for (const auto& part : path) {
    const std::string name = part.string();
    if (previous == "compute" || previous == "attention_history" ||
        previous == "cpu_overheads_history") {
      return name;
    }
    if (previous == "network") return name.substr(0, name.find('_'));
    previous = name;
  }
  return "unknown";
}

void load_file(const fs::path& path, bool named, const std::string& device,
               LoadedMeasurements& out) {
  std::vector<Measurement> records;
  if (path.extension() == ".json") {
    records = read_measurements_file(path);
  } else if (path.extension() == ".csv") {
    if (!named && !is_vidur_csv(path)) return;
    records = import_vidur_csv(path, device.empty() ? device_from_path(path) : device);
  } else if (named) {
    throw InputError(path.string(), "expected a .json measurements file or a vidur .csv table");
  } else {
    return;
  }
  out.files.push_back(data_relative_path(path));
  for (Measurement& m : records)
    out.records.push_back(std::move(m));
}

}  // namespace

std::string data_relative_path(const fs::path& path) {
  const fs::path normal = path.lexically_normal();
  fs::path tail;
  bool found = false;
  for (const auto& part : normal) {
    if (part == "profiles") {
      found = true;
      tail.clear();
    }
    if (found) tail /= part;
  }
  return found ? tail.generic_string() : normal.generic_string();
}

LoadedMeasurements load_measurements(const std::vector<fs::path>& inputs,
                                     const std::string& device) {
  LoadedMeasurements out;
  for (const fs::path& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(input)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      const std::size_t before = out.records.size();
      for (const fs::path& file : files)
        load_file(file, false, device, out);
      if (out.records.size() == before) {
        throw InputError(input.string(), "no measurement files (.json, vidur .csv) in this folder");
      }
    } else if (fs::exists(input, ec)) {
      load_file(input, true, device, out);
    } else {
      throw InputError(input.string(), "file not found");
    }
  }
  return out;
}

LoadedMeasurements load_measurement_inputs(std::vector<fs::path> inputs, const fs::path& vidur_root,
                                           const std::string& device) {
  if (!vidur_root.empty()) {
    if (device.empty()) throw UsageError("--vidur needs --device (a100, h100, ...)");
    const auto files = vidur_files_for_device(vidur_root, device);
    if (files.empty()) {
      throw InputError(vidur_root.string(), "no vidur tables for device \"" + device +
                                                "\" (expected compute/" + device + "/...)");
    }
    inputs.insert(inputs.end(), files.begin(), files.end());
  }
  if (inputs.empty()) {
    throw UsageError("give --measurements FILE_OR_DIR... or --vidur DIR --device NAME");
  }
  return load_measurements(inputs, device);
}

}  // namespace servesim
