#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/cluster.h"
#include "sim/metrics/error_bands.h"
#include "sim/metrics/record_sink.h"
#include "sim/metrics/run_result.h"

namespace servesim {

struct SimulationOutcome {
  RunResult result;                // summary and collector, for the reporters
  ClusterRunStats stats;           // events, arrivals, end time
  nlohmann::json resolved_config;  // every default filled in, presets expanded
  // The allocator's capacity (whole blocks for paged allocation), as iterations.csv reports.
  std::int64_t kv_capacity_tokens_per_replica = 0;
  // The error bands of its headline figures (run_error_bands.h): the shipped residuals of its
  // engine profile for its deployment class (the engine, the GPU class of the decode side's
  // hardware, the model family, the load regime of its mean requests in flight).
  BandLookup error_bands;
};

// What a caller needs kept beyond the summary and the records the configuration asks for.
struct SimulationOptions {
  // Each request's arrival, start and completion (MetricsCollector::request_timings), for
  // the steady-state analysis of studies and compare: 40 bytes a request.
  bool keep_request_timings = true;
  // false: keep no records in memory whatever the configuration's output.*_records say
  // (record_sinks still get them).
  bool keep_records = true;
  // Sinks that take the run's records as it goes, in the files' order (RecordOrder):
  // requests by id, iterations by start time, then replica. They must outlive the call.
  std::vector<IRecordSink*> record_sinks;
  // The record sinks (and the ordering before them) run on a thread of their own
  // (BackgroundRecordSink): the same records in the same order, overlapping the simulation.
  bool records_in_background = false;
};

// Builds one serving run from a configuration document (see assemble_config) and runs it to
// the end. The only place the simulator's objects are wired together. Relative file paths
// in the workload resolve against `working_dir`.
SimulationOutcome run_simulation(const nlohmann::json& config_document,
                                 const std::filesystem::path& data_root,
                                 const std::filesystem::path& working_dir,
                                 const SimulationOptions& options = {});

// Throws InfeasibleError when requests arrived but every one was rejected, naming how many
// for each reason: such a run measured nothing, so `run` writes no output and exits with the
// infeasible code, and a study reports the point as not fitting.
void require_served(const RunResult& result);

}  // namespace servesim
