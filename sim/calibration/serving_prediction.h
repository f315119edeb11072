#pragma once

#include <filesystem>
#include <vector>

#include "sim/calibration/serving_metrics.h"
#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_run_config.h"
#include "sim/calibration/serving_runs.h"
#include "sim/metrics/records.h"

namespace servesim {

// Each point's predicted figures, from the request records of the run that simulated it.
// A point's requests are those arriving in its window (the last stage of a run also takes any
// later arrival). Over the ones that completed: mean TTFT and E2E; ITL as the measured files
// compute it, sum(E2E - TTFT) / sum(output tokens - 1) (vLLM's mean ITL); output tokens per
// second over the span from the stage's start to the last of them to finish. The completed
// share counts those finished by the end of the stage against every request the stage sent
// (rejected ones included). A load stage or replay is predicted overloaded when that share is
// below kOverloadedCompletedShare or the mean TTFT exceeds kOverloadedTtftS. Static batches
// give output tokens per second per GPU over the makespan, bursts total (prompt + output)
// tokens per second over the makespan.
std::vector<ServingMetrics> serving_metrics_from_records(const ServingRun& run,
                                                         const ServingRunConfig& config,
                                                         const std::vector<RequestRecord>& records);

// Simulates `run` as serving_run_config configures it, with the shipped data under `data_root`,
// writing its trace (when it has one) into `scratch_dir`, and returns each point's predicted
// figures. Errors of the simulation propagate (InfeasibleError when it cannot be served).
std::vector<ServingMetrics> simulate_serving_run(const ServingRun& run,
                                                 const std::filesystem::path& data_root,
                                                 const std::filesystem::path& scratch_dir,
                                                 const ServingRunOptions& options);

// Maps `run` to its configuration and checks it as a run would (keys, policies, values)
// without simulating: the InputError a simulation would give, before anything runs.
void check_serving_run(const ServingRun& run, const std::filesystem::path& data_root,
                       const ServingRunOptions& options);

// A fresh, empty folder under the system's temporary folder, removed with everything in it
// when this object goes away: where simulate_serving_run writes its traces.
class ScratchFolder {
 public:
  ScratchFolder();
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace servesim
