#include "sim/calibration/serving_prediction.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "sim/app/app.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr double kMsPerS = 1000.0;
// Arrivals are whole nanoseconds; a window's bounds are sums of them in double seconds.
constexpr double kTimeToleranceS = 0.5e-9;

struct StageSums {
  std::int64_t sent = 0;
  std::int64_t completed = 0;
  std::int64_t finished_in_stage = 0;
  double ttft_s = 0;
  double e2e_s = 0;
  double decode_s = 0;  // sum of E2E - TTFT
  double tpot_s = 0;  // sum of (E2E - TTFT) / (output tokens - 1) over requests of 2 tokens or more
  std::int64_t tpot_requests = 0;
  std::int64_t output_tokens = 0;
  std::int64_t total_tokens = 0;
  double last_completion_s = 0;
};

double client_tokens_per_generated(const ServingPoint& point) {
  const auto* stage = std::get_if<LoadStage>(&point.workload);
  return stage != nullptr ? stage->counted_per_generated_token() : 1.0;
}

ServingMetrics metrics_of(const ServingPoint& point, const StageWindow& window, const StageSums& s,
                          std::int64_t gpus) {
  ServingMetrics m;
  const bool load_like = std::holds_alternative<LoadStage>(point.workload) ||
                         std::holds_alternative<BenchReplay>(point.workload) ||
                         std::holds_alternative<ClosedLoopRequests>(point.workload);
  const double start_s = std::isinf(window.end_s) ? 0.0 : window.start_s;
  const double span_s = s.last_completion_s - start_s;
  if (span_s > 0) m.in_flight_requests = s.e2e_s / span_s;
  if (load_like) {
    if (s.completed > 0) {
      const auto n = static_cast<double>(s.completed);
      m[ServingMetric::TtftMs] = s.ttft_s / n * kMsPerS;
      m[ServingMetric::E2eMs] = s.e2e_s / n * kMsPerS;
      // Output tokens as the client counted them (a stage under ignore_eos may count fewer or
      // more than the engine generated): the measured ITL and throughput divide by that count.
      const double counted = client_tokens_per_generated(point);
      const double counted_gaps = counted * static_cast<double>(s.output_tokens) - n;
      if (counted_gaps > 0) m[ServingMetric::ItlMs] = s.decode_s / counted_gaps * kMsPerS;
      // vLLM's mean TPOT: each request's own gaps, then the mean over requests.
      if (s.tpot_requests > 0) {
        m[ServingMetric::TpotMs] = s.tpot_s / static_cast<double>(s.tpot_requests) * kMsPerS;
      }
      if (span_s > 0) {
        m[ServingMetric::OutputTokensPerS] =
            counted * static_cast<double>(s.output_tokens) / span_s;
      }
    }
    if (s.sent > 0) {
      m[ServingMetric::CompletedShare] =
          static_cast<double>(s.finished_in_stage) / static_cast<double>(s.sent);
    }
    m.overloaded =
        s.sent > 0 &&
        (static_cast<double>(s.finished_in_stage) <
             kOverloadedCompletedShare * static_cast<double>(s.sent) ||
         (m[ServingMetric::TtftMs] && *m[ServingMetric::TtftMs] > kOverloadedTtftS * kMsPerS));
    return m;
  }
  if (s.completed == 0 || !(span_s > 0)) return m;
  if (std::holds_alternative<StaticBatch>(point.workload)) {
    m[ServingMetric::OutputTokensPerSPerGpu] =
        static_cast<double>(s.output_tokens) / span_s / static_cast<double>(gpus);
  } else {
    m[ServingMetric::TotalTokensPerS] = static_cast<double>(s.total_tokens) / span_s;
  }
  return m;
}

// Runs `f`, naming the run's first row in a configuration error (the keys it names came from
// that row and its setup).
template <class F>
auto naming_the_run(const ServingRun& run, const F& f) {
  try {
    return f();
  } catch (const InputError& e) {
    throw InputError(run.points.front().where(), e.what());
  }
}

}  // namespace

std::vector<ServingMetrics> serving_metrics_from_records(
    const ServingRun& run, const ServingRunConfig& config,
    const std::vector<RequestRecord>& records) {
  const std::size_t stages = run.points.size();
  if (config.stages.size() != stages) {
    throw InvariantError("serving run: " + std::to_string(stages) + " points but " +
                         std::to_string(config.stages.size()) + " stage windows");
  }
  std::vector<StageSums> sums(stages);
  for (const RequestRecord& r : records) {
    // The last window whose start the request arrived at or after.
    std::size_t k = 0;
    while (k + 1 < stages && r.arrival_s >= config.stages[k + 1].start_s - kTimeToleranceS)
      ++k;
    if (r.arrival_s < config.stages[k].start_s - kTimeToleranceS) continue;
    StageSums& s = sums[k];
    ++s.sent;
    if (r.rejected) continue;
    ++s.completed;
    if (r.completion_s <= config.stages[k].end_s + kTimeToleranceS) ++s.finished_in_stage;
    const double ttft_s = r.first_token_s - r.arrival_s;
    const double e2e_s = r.completion_s - r.arrival_s;
    s.ttft_s += ttft_s;
    s.e2e_s += e2e_s;
    s.decode_s += e2e_s - ttft_s;
    if (r.output_tokens > 1) {
      s.tpot_s += (e2e_s - ttft_s) / static_cast<double>(r.output_tokens - 1);
      ++s.tpot_requests;
    }
    s.output_tokens += r.output_tokens;
    s.total_tokens += r.prompt_tokens + r.output_tokens;
    s.last_completion_s = std::max(s.last_completion_s, r.completion_s);
  }
  std::vector<ServingMetrics> out;
  out.reserve(stages);
  for (std::size_t k = 0; k < stages; ++k)
    out.push_back(metrics_of(run.points[k], config.stages[k], sums[k], config.gpus_per_replica));
  return out;
}

std::vector<ServingMetrics> simulate_serving_run(const ServingRun& run,
                                                 const std::filesystem::path& data_root,
                                                 const std::filesystem::path& scratch_dir,
                                                 const ServingRunOptions& options) {
  const ServingRunConfig config = serving_run_config(run, options);
  if (!config.trace.empty()) {
    const auto path = scratch_dir / kServingTraceFile;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << serving_trace_csv(config.trace);
    out.close();
    if (!out) throw InputError(path.string(), "cannot write the requests of this run");
  }
  ConfigSources sources;
  sources.overrides = config.overrides;
  const SimulationOutcome outcome = naming_the_run(run, [&] {
    return run_simulation(assemble_config(sources, data_root), data_root, scratch_dir);
  });
  std::vector<ServingMetrics> points =
      serving_metrics_from_records(run, config, outcome.result.collector.request_records());
  for (ServingMetrics& p : points) {
    p.deployment = outcome.error_bands.deployment;
    p.deployment.regime = load_regime(p.in_flight_requests);
  }
  return points;
}

void check_serving_run(const ServingRun& run, const std::filesystem::path& data_root,
                       const ServingRunOptions& options) {
  const ServingRunConfig config = serving_run_config(run, options);
  ConfigSources sources;
  sources.overrides = config.overrides;
  naming_the_run(run, [&] {
    return run_config_from_json(assemble_config(sources, data_root), "configuration",
                                policy_menus());
  });
}

ScratchFolder::ScratchFolder() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "servesim_validate_XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw InputError(pattern, "cannot create a temporary folder for the simulated requests");
  }
  path_ = pattern;
}

ScratchFolder::~ScratchFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace servesim
