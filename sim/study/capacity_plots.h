#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/study/gnuplot.h"

namespace servesim {

// One point a capacity search simulated, as its figure shows it.
struct CapacityPlotPoint {
  double x = 0;            // the searched quantity: offered rate (req/s) or GPUs
  double worst_ratio = 0;  // SloVerdict::worst_ratio: the worst SLO term's measured / limit
  bool met = false;
};

// capacity.dat and capacity.gp: the points a capacity search simulated, each SLO verdict's
// worst measured / limit ratio against `x_label`'s quantity, on a log axis with the limit (1)
// drawn, points meeting the SLO filled and the others (unstable ones included, whatever their
// ratio) open. Points without a finite positive
// ratio (a deployment that does not fit) are left out; nothing is written, and nothing
// returned, when none is left.
std::optional<Figure> write_capacity_figure(const std::filesystem::path& dir,
                                            const std::vector<CapacityPlotPoint>& points,
                                            const std::string& x_label, const std::string& title);

}  // namespace servesim
