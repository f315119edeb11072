#include "sim/workload/workload_spec.h"

#include <algorithm>
#include <cmath>

#include "sim/core/error.h"
#include "sim/workload/composed_source.h"
#include "sim/workload/impl/all_at_once_arrivals.h"
#include "sim/workload/impl/closed_loop_arrivals.h"
#include "sim/workload/impl/concurrency_limited_arrivals.h"
#include "sim/workload/impl/constant_arrivals.h"
#include "sim/workload/impl/empirical_lengths.h"
#include "sim/workload/impl/filtered_lengths.h"
#include "sim/workload/impl/gamma_arrivals.h"
#include "sim/workload/impl/independent_lengths.h"
#include "sim/workload/impl/poisson_arrivals.h"
#include "sim/workload/impl/shared_prefix_lengths.h"
#include "sim/workload/impl/staged_arrivals.h"
#include "sim/workload/impl/trace_arrivals.h"
#include "sim/workload/impl/trace_lengths.h"
#include "sim/workload/lengths_csv.h"
#include "sim/workload/session_source.h"

namespace servesim {
namespace {

// The factor a trace's arrival times are multiplied by: trace.time_scale, or with
// arrival.rate_per_s the replayed rows' recorded mean rate ((n - 1) / their span) over it.
double trace_time_scale(const WorkloadSpec& spec, const Trace& trace) {
  const auto rate = spec.arrival.replay_rate_per_s;
  if (!rate) return spec.trace->time_scale;
  if (std::isinf(*rate)) return 0.0;
  std::size_t rows = trace.size();
  if (spec.num_requests) rows = std::min(rows, static_cast<std::size_t>(*spec.num_requests));
  const double span_s =
      rows < 2 ? 0.0 : (trace.arrivals[rows - 1] - trace.arrivals.front()).seconds();
  if (!(span_s > 0)) {
    throw InputError(trace.source_name,
                     "arrival.rate_per_s: the rows replayed all arrive at one instant, so they "
                     "have no rate to rescale (use trace.time_scale, or \"inf\")");
  }
  return static_cast<double>(rows - 1) / span_s / *rate;
}

std::unique_ptr<IArrivalProcess> make_open_arrivals(const WorkloadSpec& spec,
                                                    const std::shared_ptr<const Trace>& trace) {
  const ArrivalSpec& a = spec.arrival;
  if (spec.all_at_once()) return std::make_unique<AllAtOnceArrivals>();
  if (a.staged()) {
    // The parser allows stages with poisson and constant only.
    std::vector<std::unique_ptr<IArrivalProcess>> stages;
    for (const ArrivalStage& stage : a.stages) {
      if (a.process == ArrivalProcessKind::Constant) {
        stages.push_back(std::make_unique<ConstantArrivals>(stage.rate_per_s));
      } else {
        stages.push_back(std::make_unique<PoissonArrivals>(stage.rate_per_s));
      }
    }
    return std::make_unique<StagedArrivals>(stage_windows(a.stages), std::move(stages));
  }
  switch (a.process) {
    case ArrivalProcessKind::Poisson:
      return std::make_unique<PoissonArrivals>(a.rate_per_s);
    case ArrivalProcessKind::Gamma:
      return std::make_unique<GammaArrivals>(a.rate_per_s, a.cv);
    case ArrivalProcessKind::Constant:
      return std::make_unique<ConstantArrivals>(a.rate_per_s);
    case ArrivalProcessKind::ClosedLoop:
      return std::make_unique<ClosedLoopArrivals>(a.users, a.think_time_s);
    case ArrivalProcessKind::Trace:
      return std::make_unique<TraceArrivals>(trace, trace_time_scale(spec, *trace));
  }
  throw InvariantError("unhandled arrival process");
}

std::unique_ptr<IArrivalProcess> make_arrivals(const WorkloadSpec& spec,
                                               const std::shared_ptr<const Trace>& trace) {
  auto arrivals = make_open_arrivals(spec, trace);
  if (const auto limit = spec.arrival.max_concurrency) {
    return std::make_unique<ConcurrencyLimitedArrivals>(std::move(arrivals), *limit);
  }
  return arrivals;
}

std::unique_ptr<ILengthDistribution> make_lengths(const WorkloadSpec& spec,
                                                  const std::shared_ptr<const Trace>& trace) {
  const LengthsSpec& l = spec.lengths;
  std::unique_ptr<ILengthDistribution> lengths;
  switch (l.distribution) {
    case LengthsKind::Independent:
      lengths = std::make_unique<IndependentLengths>(l.prompt, l.output);
      break;
    case LengthsKind::JointEmpirical:
      lengths = std::make_unique<EmpiricalLengths>(read_lengths_csv(l.path));
      break;
    case LengthsKind::Trace:
      lengths = std::make_unique<TraceLengths>(trace);
      break;
    case LengthsKind::SharedPrefix:
      lengths = std::make_unique<SharedPrefixLengths>(l.shared_prefix);
      break;
    case LengthsKind::MultiTurn:
    case LengthsKind::Agentic:
      throw InvariantError("session workloads have no length distribution of their own");
  }
  if (l.max_prompt_tokens || l.max_total_tokens) {
    lengths = std::make_unique<FilteredLengths>(std::move(lengths), l.max_prompt_tokens,
                                                l.max_total_tokens, spec.source_name);
  }
  return lengths;
}

}  // namespace

std::unique_ptr<IWorkloadSource> make_workload_source(const WorkloadSpec& spec,
                                                      const RngStreams& streams) {
  // Read once and shared, so trace arrivals and trace lengths walk the same rows.
  std::shared_ptr<const Trace> trace;
  if (spec.uses_trace()) {
    trace = std::make_shared<const Trace>(trace_rows(read_trace_file(spec.trace->path),
                                                     spec.trace->first_row, spec.trace->end_row,
                                                     spec.source_name));
  }

  StopConditions stop;
  stop.max_requests = spec.num_requests;
  if (spec.duration_s) stop.end_time = SimTime::from_seconds(*spec.duration_s);
  if (spec.sessions()) {
    // Arrivals start sessions; each session draws from its own stream, derived from this one.
    return std::make_unique<SessionWorkloadSource>(spec.lengths.session, make_arrivals(spec, trace),
                                                   streams.stream("arrivals"),
                                                   streams.stream("sessions").next_u64(), stop);
  }
  return std::make_unique<ComposedWorkloadSource>(
      make_arrivals(spec, trace), make_lengths(spec, trace), streams.stream("arrivals"),
      streams.stream("lengths"), stop);
}

}  // namespace servesim
