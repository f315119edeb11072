#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/metrics/error_bands.h"

namespace servesim::cli {

// A summary's "error_bands", when it has them.
std::optional<BandLookup> summary_bands(const nlohmann::json& summary);

// The headline figures of a summary (summary.json's content, with its "error_bands") with
// their error bands, one a line: TTFT p99, TPOT p99, E2E p99 and the output token throughput,
// e.g. "TTFT p99 812.3 ms (-6%/+14%, from 90 points of this engine and GPU class)"; one line
// saying why where no band applies, nothing without "error_bands". docs/validation.md.
void print_error_bands(std::ostream& out, const nlohmann::json& summary);

// "-6%/+14%" for the band of `metric` in a summary's "error_bands", or "-" without one.
std::string band_cell(const nlohmann::json& summary, BandMetric metric);

}  // namespace servesim::cli
