#include <stdexcept>

#include "sim/calibration/serving_point.h"
#include "sim/core/error.h"
#include "tests/fuzz/fuzz_scratch.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

// A CSV of measured serving points (docs/validation.md: serving under load, static batches, a
// burst or a closed loop) as `servesim validate --measured` and `calibrate --measured` read
// it, without a setup. An accepted file gives one point per data row, numbered from 1 in
// order, each with a model, a hardware profile and tp, pp >= 1.
bool load_serving_csv_text(std::string_view text) {
  try {
    ServingPointOptions options;
    options.data_root = stub_data_root();
    const auto points = read_serving_points(write_scratch_file("measured.csv", text), options);
    if (points.empty()) throw std::logic_error("measured CSV accepted with no points");
    for (std::size_t i = 0; i < points.size(); ++i) {
      const ServingPoint& p = points[i];
      if (p.row != i + 1 || p.model.empty() || p.hardware.empty() || p.tp < 1 || p.pp < 1) {
        throw std::logic_error("measured CSV point accepted out of order or without a deployment");
      }
      (void)p.workload_label();
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_serving_csv_text)
