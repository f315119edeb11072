#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/calibration/measurement.h"
#include "sim/calibration/prediction.h"
#include "sim/hardware/hardware_profile.h"

namespace servesim {

// Least squares of relative errors, sum ((x_i . beta - y_i) / y_i)^2, with every coefficient
// >= 0 (active set: a negative coefficient is pinned to 0 and the rest refitted). Rows are
// features; y holds the measured seconds (positive). Columns that are all zero keep 0.
// `offset` (empty, or one per row) is a known part of each row's prediction:
// sum ((x_i . beta + offset_i - y_i) / y_i)^2.
std::vector<double> fit_nonnegative_relative(const std::vector<std::vector<double>>& rows,
                                             const std::vector<double>& y,
                                             std::span<const double> offset = {});

// One measured kernel with its sample under the profile being fitted.
struct CeilingPoint {
  KernelSample sample;
  double measured_s = 0;
  const Measurement* record = nullptr;
};

// Fits the seven numbers of a KernelCeilings to measured kernels of one class (the GEMM
// tiling is kept from `start`): a kernel is compute- or memory-bound under the current
// estimate, each bound is linear in its parameters (1/e, half/e, masked weight/e,
// quantization weight/e) and the fixed cost, so the fit alternates classifying
// and solving until the classification is stable (a least-squares fit of a max of two linear
// models). Without points on one side of the roofline, that side keeps `start`. Throws
// InputError naming the class, the files and the fastest record (highest achieved fraction
// of the datasheet peak) when the data imply a ceiling that is negative, infinite or above
// the datasheet (efficiency > 1: usually times in the wrong unit). When no record runs above
// the datasheet peaks, a side whose best fit lands just above the datasheet (a kernel served
// partly from L2, say) is held at efficiency 1 instead: a bounded least-squares fit.
KernelCeilings fit_kernel_ceilings(std::span<const CeilingPoint> points,
                                   const KernelCeilings& start, const std::string& class_name);

// Efficiency 1 / coefficient of a fitted inverse-efficiency term, refusing what is not in
// (0, 1] with an InputError naming `what` and `evidence` (the record that shows it).
double efficiency_from_inverse(double inverse, const std::string& what,
                               const std::string& evidence);

}  // namespace servesim
