#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "sim/calibration/error_stats.h"
#include "sim/calibration/measurement.h"
#include "sim/engine/engine_costs.h"
#include "sim/hardware/hardware_profile.h"

namespace servesim {

// Fits the parameters of `base` that the measurements inform, each group of records on its
// own, and leaves the rest as they are:
// - gemm -> kernels.gemm, decode_attention -> kernels.decode_attention, prefill_attention ->
//   kernels.prefill_attention (see fit_kernel_ceilings);
// - memcpy_d2d and copy_kernel_d2d -> efficiency.memory_bandwidth, overheads.kernel_launch_s;
// - all_reduce -> efficiency.gpu_link, overheads.collective_latency_s (alpha-beta);
// Iteration records are not fitted (they check the whole model; see validate), nor are
// host_overhead records: the host's work is the engine's (fit_host_costs).
// Every fitted number gets a source naming the record count; `sources_note` is appended.
HardwareProfile fit_profile(std::span<const Measurement> measurements, const HardwareProfile& base,
                            const std::string& sources_note = "");

// The engine's host costs from host_overhead records (time of one step's host work against
// its batch): step_s and per_sequence_s by the same non-negative least squares of relative
// errors; the other host terms are left at zero. No records: an InputError.
EngineHostCosts fit_host_costs(std::span<const Measurement> measurements);

struct CalibrationReport {
  HardwareProfile profile;                    // fitted, with "calibration" metadata
  std::map<std::string, ErrorStats> fit;      // in-sample residuals per class
  std::map<std::string, ErrorStats> holdout;  // held-out errors per class
  std::map<std::string, std::string> method;  // per class: how it was held out
};

// fit_profile plus residuals and hold-out errors: leave-one-model-out for a group whose
// records name two or more models (fit on all models but one, predict the held-out one),
// otherwise two-fold (fit on even records, predict odd ones, and the reverse). `files` are
// recorded as the profile's calibration.files.
CalibrationReport calibrate(std::span<const Measurement> measurements, const HardwareProfile& base,
                            const std::vector<std::string>& files);

}  // namespace servesim
