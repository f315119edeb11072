#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/study/gnuplot.h"
#include "sim/study/sweep_result.h"

namespace servesim {

// What a sweep's latency curves are drawn against.
enum class CurveX {
  Throughput,   // achieved requests/s (default)
  OfferedRate,  // the rate axis's value, requests/s
};

// "throughput" or "offered_rate"; anything else is an InputError naming `origin`.
CurveX parse_curve_x(const std::string& text, const std::string& origin);

struct CurveOptions {
  CurveX x = CurveX::Throughput;
  bool force_log_y = false;  // else a panel is log-scaled when its values span > kLogSpan
  std::string title;         // what was held fixed (plot_title.h); empty: none
};

// With a rate axis: curves.dat and the latency_throughput figure, one curve per combination
// of the other axes (a "policy"): normalized latency, P99 TTFT and P99 TPOT against the
// achieved throughput or the offered rate, legend below the panels. Returns nothing when the
// sweep has no rate axis.
std::optional<Figure> write_curve_figure(const SweepResult& sweep, const std::filesystem::path& dir,
                                         const CurveOptions& options = {});

}  // namespace servesim
