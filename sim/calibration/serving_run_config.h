#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_runs.h"

namespace servesim {

// How a run's workload is written. Agreed: the shared-prefix lengths and load stages agreed for
// the workload spec ({"arrival": {"process": "constant", "stages": [...]}, "lengths":
// {"distribution": "shared_prefix", ...}}). Existing: the keys every build has, a trace of the
// same arrivals and lengths (the same requests while servesim has no prefix cache).
enum class WorkloadKeys { Agreed, Existing };

// The keys this build's workload parser accepts: the one place to switch to Agreed once the
// shared-prefix workload and arrival stages are merged.
inline constexpr WorkloadKeys kWorkloadKeysOfThisBuild = WorkloadKeys::Agreed;

struct ServingRunOptions {
  // Simulate only a prefix of each stage: its duration cut to N / rate, so at most N requests
  // (burst and replay points: the first N requests; static batches are simulated whole).
  std::optional<std::int64_t> max_requests_per_point;
  std::uint64_t seed = 0;
  WorkloadKeys workload_keys = kWorkloadKeysOfThisBuild;
  // Applied after everything else (a calibration's engine terms: "engine.host.step_s=...").
  std::vector<ConfigOverride> extra_overrides;
};

// One request of a workload written as a trace.
struct PlannedRequest {
  std::int64_t arrival_ns = 0;
  std::int64_t prompt_tokens = 1;
  std::int64_t output_tokens = 1;
};

// Where one point's requests sit on the run's time line: those arriving in [start_s, end_s)
// are its requests (the last stage takes every later arrival too), and "by the end of the
// stage" means by end_s.
struct StageWindow {
  double start_s = 0;
  double end_s = 0;  // +infinity for points that are not load stages
};

// The trace file a run's workload names, relative to the folder the run is given as its working
// directory (run_simulation resolves workload paths against it).
inline constexpr char kServingTraceFile[] = "serving_requests.csv";

struct ServingRunConfig {
  // For assemble_config, in order: model, hardware, tp, pp, the engine (engine.name, or the
  // scheduler standing in for it), the knobs, the seed, the outputs and the workload.
  std::vector<ConfigOverride> overrides;
  std::vector<PlannedRequest> trace;  // the requests of kServingTraceFile; empty when unused
  std::vector<StageWindow> stages;    // one per point of the run
  std::int64_t gpus_per_replica = 1;  // tp x pp
};

// The servesim run configuration that simulates `run` (docs/validation.md "How points are
// simulated"). Throws InputError for a point it cannot express.
ServingRunConfig serving_run_config(const ServingRun& run, const ServingRunOptions& options);

// The workload section alone, as the `workload=` override of serving_run_config sets it.
nlohmann::json serving_run_workload(const ServingRun& run, const ServingRunOptions& options);

// kServingTraceFile's text: the plain trace format (arrival_time_s,prompt_tokens,output_tokens),
// arrivals exact to the nanosecond.
std::string serving_trace_csv(const std::vector<PlannedRequest>& requests);

}  // namespace servesim
