#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/study/gnuplot.h"

namespace servesim {

// One policy of a `compare`: its label and its run's summary.json.
struct ComparedSummary {
  std::string label;
  nlohmann::json summary;
};

// Writes the data files and scripts of a comparison's figures into `dir`:
// - kv_breakdown (kv_breakdown.dat): a stacked bar per policy of its KV memory, time-weighted
//   shares (%) of the KV capacity: token states, reserved, internal fragmentation, external
//   fragmentation, free (as in figure 2 of the vLLM paper); each row sums to 100;
// - latency_bars (latency_bars.dat): bars per policy of mean TTFT, mean TPOT and normalized
//   latency (the comparison runs one rate; a sweep draws curves over rates).
// `title` names what was held fixed (plot_title.h). Returns the figures written.
std::vector<Figure> write_compare_figures(const std::vector<ComparedSummary>& runs,
                                          const std::filesystem::path& dir,
                                          const std::string& title);

}  // namespace servesim
