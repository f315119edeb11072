#pragma once

#include <filesystem>

#include "sim/app/simulation.h"

namespace servesim {

// The files of a run's output that are written only when asked for.
struct RunOutputFiles {
  bool requests_jsonl = false;  // requests.csv again as JSON lines (run --requests-jsonl)
  // false: requests.csv and iterations.csv were written as the run went (CsvRecordWriter as
  // a record sink), not from the records kept.
  bool records = true;
};

// Writes summary.json, requests.csv, iterations.csv and resolved_config.json of one run, and
// the optional files `files` asks for.
void write_run_outputs(const SimulationOutcome& outcome, const std::filesystem::path& dir,
                       const RunOutputFiles& files = {});

}  // namespace servesim
