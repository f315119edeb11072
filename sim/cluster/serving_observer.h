#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "sim/core/sim_time.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/metrics/records.h"
#include "sim/metrics/run_summary.h"
#include "sim/scheduler/request.h"

namespace servesim {

// Sets an iteration record's KV memory fields from the allocator's usage.
inline void set_kv_memory(IterationRecord& record, const KvUsage& usage) {
  record.kv_used_tokens = usage.used();
  record.kv_capacity_tokens = usage.capacity_tokens;
  record.kv_memory =
      KvMemoryTokens{usage.token_states,           usage.reserved, usage.internal_fragmentation,
                     usage.external_fragmentation, usage.free,     usage.cached};
}

// The batch of a decode run from one of its iterations on: the first iteration's, and after
// each round that preempted (a run through preemption, IDecodeRoundAllocator::
// decode_stretches) the batch that round left.
struct RunBatch {
  std::size_t first_iteration = 0;  // the iteration it starts at (0: the run's first)
  std::int64_t decodes = 0;         // sequences decoding, one token each
  std::int64_t context_tokens = 0;  // their contexts' sum in first_iteration
  std::int32_t preempted = 0;       // requests first_iteration preempted
};

// The iterations of a decode run after its first: iteration k (k = 1 .. usages.size()) runs
// from ends[k - 1] to ends[k] with the KV memory of usages[k - 1]. Its batch is the last of
// `batches` starting at or before it: every context there is one token longer per
// iteration, each sequence emits a token at its end, and only a batch's first iteration
// preempts. (Where the first iteration ended prompts, the first batch holds them as if
// they had decoded in it, with the contexts they have then.)
struct DecodeRunIterations {
  // The run's first iteration, already reported, less any prompt work it did: what the
  // later ones share.
  const IterationRecord& first;
  std::span<const SimTime> ends;
  std::span<const KvUsage> usages;
  std::span<const RunBatch> batches;  // the first iteration's first

  const RunBatch& batch_of(std::size_t k) const {
    if (batches.size() == 1) return batches.front();
    return *(
        std::upper_bound(batches.begin(), batches.end(), k,
                         [](std::size_t at, const RunBatch& b) { return at < b.first_iteration; }) -
        1);
  }
  // Turns a copy of `first` (or of any iteration of the run) into the k-th iteration, as a
  // replica running one iteration at a time reports it.
  void set_iteration(IterationRecord& record, std::size_t k) const {
    const RunBatch& batch = batch_of(k);
    record.start_s = ends[k - 1].seconds();
    record.duration_s = (ends[k] - ends[k - 1]).seconds();
    set_kv_memory(record, usages[k - 1]);
    record.batch_size = static_cast<std::int32_t>(batch.decodes);
    record.decode_tokens = batch.decodes;
    record.sampled_sequences = batch.decodes;
    record.preempted = k == batch.first_iteration ? batch.preempted : 0;
    record.decode_context_tokens =
        batch.context_tokens + static_cast<std::int64_t>(k - batch.first_iteration) * batch.decodes;
  }
  double gap_s(std::size_t k) const { return (ends[k] - ends[k - 1]).seconds(); }
  // The tokens iteration k emits: one per sequence of its batch.
  std::int64_t gaps_at(std::size_t k) const { return batch_of(k).decodes; }
};

// The signals a serving run emits; metrics and closed-loop workloads listen to them.
// Iterations and token gaps of one replica arrive in simulated-time order; those of different
// replicas may interleave in any order (a replica advancing decode iterations in bulk reports
// them together), so a listener that needs a canonical order keeps them per replica.
class IServingObserver {
 public:
  virtual ~IServingObserver() = default;
  virtual void on_iteration(const IterationRecord& iteration) = 0;
  // `count` inter-token gaps of `gap_s` seconds each, on replica `replica`.
  virtual void on_token_gaps(std::int32_t replica, double gap_s, std::int64_t count) = 0;
  // The later iterations of a decode run, all at once: each reported as on_iteration, then
  // their token gaps (one per sequence of the batch and iteration) as on_token_gaps.
  virtual void on_decode_run(const DecodeRunIterations& run);
  virtual void on_request_finished(const Request& request, SimTime now) = 0;
  // Disaggregation: a request about to finish, its TTFT in parts (kTtftPartNames order).
  virtual void on_ttft_parts(std::int64_t request, const std::array<double, kTtftParts>& parts) {
    (void)request;
    (void)parts;
  }
  virtual void on_request_rejected(const RequestSpec& request, const std::string& reason,
                                   SimTime now) = 0;
  // Every iteration starting before `start` has been reported: said now and then between
  // events, so that a listener that orders iterations can let the earlier ones go.
  virtual void on_iterations_reported_before(SimTime start) { (void)start; }
};

inline void IServingObserver::on_decode_run(const DecodeRunIterations& run) {
  IterationRecord record = run.first;  // the fields the iterations share are set once
  for (std::size_t k = 1; k <= run.usages.size(); ++k) {
    run.set_iteration(record, k);
    on_iteration(record);
  }
  for (std::size_t k = 1; k <= run.usages.size(); ++k)
    on_token_gaps(run.first.replica, run.gap_s(k), run.gaps_at(k));
}

}  // namespace servesim
