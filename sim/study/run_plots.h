#pragma once

#include <filesystem>
#include <vector>

#include "sim/metrics/metrics_collector.h"
#include "sim/study/gnuplot.h"

namespace servesim {

// From a run folder's requests.csv and iterations.csv, writes the data files and scripts of
// its figures: TTFT and TPOT CDFs (latency_cdf), the KV memory breakdown over time, stacked
// (kv_memory), and the batch size over time (batch_size). Long runs are reduced to at most
// a few hundred time bins and quantiles, so plots stay small. Returns the figures written
// (none for a file that is missing or holds no rows).
std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir);

// The same figures, byte for byte, from the records a run kept in memory rather than from the
// files (run --out draws them without reading back what it wrote); `run_dir` gets the data
// files and scripts. Tested equal to the files' version.
std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir,
                                      const MetricsCollector& collector);

}  // namespace servesim
