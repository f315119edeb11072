#include "sim/cluster/replica.h"

#include <algorithm>

#include "sim/core/error.h"

namespace servesim {

Replica::Replica(std::int32_t id, std::unique_ptr<IKvCacheAllocator> allocator,
                 std::unique_ptr<IBatchScheduler> scheduler, const IExecutionTimeModel& time_model,
                 std::int64_t pipeline_stages, std::int64_t max_sequence_tokens,
                 IServingObserver& observer, const SwapLink& swap, bool bulk_decode)
    : id_(id),
      allocator_(std::move(allocator)),
      scheduler_(std::move(scheduler)),
      time_model_(time_model),
      pipeline_stages_(pipeline_stages),
      max_sequence_tokens_(max_sequence_tokens),
      observer_(observer),
      swap_(swap),
      bulk_decode_(bulk_decode && pipeline_stages == 1 && scheduler_->decode_plans_repeat()),
      budget_(scheduler_->budget()) {
  queues_.swap.capacity_tokens = swap.capacity_tokens;
}

std::optional<std::string> Replica::reject_reason(const RequestSpec& request) const {
  const std::int64_t length = request.prompt_tokens + request.output_tokens;
  if (length > max_sequence_tokens_) {
    return "prompt + output tokens (" + std::to_string(length) +
           ") exceed the maximum sequence length (" + std::to_string(max_sequence_tokens_) + ")";
  }
  return scheduler_->reject_reason(request, *allocator_);
}

void Replica::enqueue(Request* request) {
  request->replica = id_;
  queues_.waiting.push_back(request);
  ++outstanding_;
}

ReplicaLoad Replica::load() const {
  const KvUsage usage = allocator_->usage(0);
  return ReplicaLoad{
      id_, outstanding_,
      static_cast<double>(usage.used()) / static_cast<double>(usage.capacity_tokens)};
}

// Checked every iteration: the messages are built only when a check fails, out of line.
void Replica::check_usage(const KvUsage& usage, SimTime now) const {
  if (usage.used() <= usage.capacity_tokens && usage.token_states >= 0 && usage.reserved >= 0 &&
      usage.internal_fragmentation >= 0 && usage.external_fragmentation >= 0 && usage.free >= 0 &&
      usage.used() + usage.external_fragmentation + usage.free == usage.capacity_tokens) {
    [[likely]] return;
  }
  usage_broken(usage, now);
}

void Replica::usage_broken(const KvUsage& usage, SimTime now) const {
  const auto where = [this] { return "replica " + std::to_string(id_) + ": "; };
  if (usage.used() > usage.capacity_tokens) {
    throw InvariantError("kv_within_capacity",
                         where() + std::to_string(usage.used()) + " KV slots in use of " +
                             std::to_string(usage.capacity_tokens),
                         now);
  }
  if (usage.token_states < 0 || usage.reserved < 0 || usage.internal_fragmentation < 0 ||
      usage.external_fragmentation < 0 || usage.free < 0 ||
      usage.used() + usage.external_fragmentation + usage.free != usage.capacity_tokens) {
    throw InvariantError("blocks_conserved",
                         where() + "KV usage categories do not add up to the capacity of " +
                             std::to_string(usage.capacity_tokens) + " slots",
                         now);
  }
  throw InvariantError("kv_within_capacity", where() + "KV usage out of range", now);
}

void Replica::check_budget(const BatchPlan& plan, SimTime now) const {
  const auto where = [this] { return "replica " + std::to_string(id_) + ": "; };
  if (plan.shape.prefill_tokens > budget_.prefill_tokens || plan.shape.tokens() > budget_.tokens ||
      plan.shape.sequences() > budget_.sequences) {
    throw InvariantError("batch_token_budget",
                         where() + "a batch of " + std::to_string(plan.shape.sequences()) +
                             " sequences, " + std::to_string(plan.shape.tokens()) + " tokens (" +
                             std::to_string(plan.shape.prefill_tokens) +
                             " prompt) exceeds the scheduler's budget",
                         now);
  }
}

IterationRecord Replica::record_of(SimTime start, SimTime duration, const BatchPlan& plan,
                                   const KvUsage& usage) const {
  IterationRecord record;
  record.replica = id_;
  record.start_s = start.seconds();
  record.duration_s = duration.seconds();
  record.batch_size = static_cast<std::int32_t>(plan.work.size());
  record.prefill_tokens = plan.shape.prefill_tokens;
  record.decode_tokens = plan.shape.decode_sequences;
  record.preempted = static_cast<std::int32_t>(plan.preempted.size());
  set_kv_memory(record, usage);
  const BatchShape& shape = plan.shape;
  record.prefill_sequences = shape.prefill_sequences;
  record.prefill_context_tokens = shape.prefill_context_tokens;
  record.prefill_attention_pairs = shape.prefill_attention_pairs;
  record.prefill_masked_pairs = shape.prefill_masked_pairs;
  record.decode_context_tokens = shape.decode_context_tokens;
  record.sampled_sequences = shape.sampled_sequences;
  return record;
}

std::optional<Replica::Launch> Replica::try_launch(SimTime now) {
  if (stage_busy(now) || !has_work()) return std::nullopt;
  BatchPlan plan = spare_plan();
  scheduler_->plan(queues_, *allocator_, plan);
  if (plan.empty()) {
    if (!plan.preempted.empty() || plan.swap_in_tokens > 0) {
      throw InvariantError("replica " + std::to_string(id_) +
                           ": the scheduler preempted requests but planned no work");
    }
    spare_plans_.push_back(std::move(plan));
    return std::nullopt;
  }
  // With one stage nothing is planned while a batch is in flight, so only pipelines mark
  // requests in flight; a request is first scheduled for its prompt.
  const bool mark_in_flight = pipeline_stages_ > 1;
  for (const ScheduledWork& w : plan.work) {
    if (mark_in_flight) w.request->in_flight = true;
    if (w.prefill && !w.request->scheduled) {
      w.request->scheduled = true;
      w.request->first_scheduled = now;
    }
  }
  // A plan that starts a decode run is priced with the whole run, in one call.
  const std::int64_t run_steps = decode_run_steps(plan);
  double first_s;
  if (run_steps > 1) {
    run_.durations_s.resize(static_cast<std::size_t>(run_steps));
    time_model_.estimate_decode_run(plan.shape, run_.durations_s);
    first_s = run_.durations_s.front();
  } else {
    // Swaps copy KV blocks over the host link before the forward pass can use the memory.
    const double swap_s = swap_.bytes_per_s > 0
                              ? static_cast<double>(plan.swap_in_tokens + plan.swap_out_tokens) *
                                    swap_.bytes_per_token / swap_.bytes_per_s
                              : 0.0;
    first_s = time_model_.estimate(plan.shape).total_time_s + swap_s;
  }
  const SimTime stage = SimTime::duration_from_seconds(first_s);
  SimTime total = stage;
  for (std::int64_t s = 1; s < pipeline_stages_; ++s)
    total += stage;

  const KvUsage usage = allocator_->usage(next_final_tokens());
  check_usage(usage, now);
  check_budget(plan, now);
  const IterationRecord record = record_of(now, total, plan, usage);
  observer_.on_iteration(record);
  ++iterations_;

  const std::int64_t batch = next_batch_++;
  SimTime done = now + total;
  stage_free_at_ = now + stage;
  if (run_steps > 1) {
    run_.first = record;
    start_decode_run(batch, done);
    done = run_.ends.back();
    stage_free_at_ = done;
  }
  in_flight_.push_back({batch, std::move(plan)});
  return Launch{batch, stage_free_at_, done};
}

std::int64_t Replica::decode_run_steps(const BatchPlan& plan) {
  if (!bulk_decode_ || plan.shape.prefill_sequences > 0 || !plan.preempted.empty() ||
      plan.swap_in_tokens > 0 || plan.swap_out_tokens > 0 ||
      plan.work.size() != queues_.running.size()) {
    return 1;
  }
  // The run stops at the first iteration that finishes a request (that one included: the
  // batch changes only after it) and before any the allocator could not grow.
  const std::int64_t steps = std::min(run_limit_, plan.fewest_tokens_left);
  if (steps < 2) return 1;
  return 1 + allocator_->decode_rounds_available(plan.decode_sequences, steps - 1);
}

void Replica::start_decode_run(std::int64_t batch, SimTime first_end) {
  run_.batch = batch;
  run_.next_final_tokens = next_final_tokens();
  // Every context grows by one token per iteration; each iteration is priced and rounded on
  // its own, exactly as it would be launched alone.
  const std::size_t steps = run_.durations_s.size();
  run_.ends.resize(steps);
  SimTime end = first_end;
  run_.ends[0] = end;
  for (std::size_t k = 1; k < steps; ++k) {
    end += SimTime::duration_from_seconds(run_.durations_s[k]);
    run_.ends[k] = end;
  }
}

std::optional<Replica::Launch> Replica::cut_decode_run(SimTime now) {
  if (run_.batch < 0) return std::nullopt;
  // Iteration k (0-based) launched before the arrival when it started before `now`: it
  // starts where iteration k - 1 ends, and launches run after arrivals at the same instant.
  const auto in_flight = std::lower_bound(run_.ends.begin(), run_.ends.end(), now);
  if (in_flight == run_.ends.end()) {
    throw InvariantError("time_monotonic",
                         "replica " + std::to_string(id_) + ": a decode run ended unnoticed", now);
  }
  const auto steps = static_cast<std::size_t>(in_flight - run_.ends.begin()) + 1;
  if (steps == run_.ends.size()) return std::nullopt;
  run_.ends.resize(steps);
  // Halved, but not below kRoundsPerSequence per sequence of the batch: the rounds priced
  // in vain then cost about what ending the run early saves.
  run_limit_ = std::max<std::int64_t>(
      {4, run_limit_ / 2, kRoundsPerSequence * std::int64_t{run_.first.batch_size}});
  const std::int64_t renamed = next_batch_++;
  for (InFlight& f : in_flight_) {
    if (f.batch == run_.batch) f.batch = renamed;
  }
  superseded_.push_back(run_.batch);
  run_.batch = renamed;
  stage_free_at_ = run_.ends.back();
  return Launch{renamed, stage_free_at_, stage_free_at_};
}

void Replica::emit_tokens(const BatchPlan& plan, SimTime at, std::vector<Request*>& finished,
                          std::int64_t later_steps, SimTime last_at) {
  // Gaps of equal length are reported together, in plan order, whether iterations run one
  // at a time or in bulk, so the metrics see the same calls either way.
  SimTime gap;
  std::int64_t gaps = 0;
  const std::size_t count = plan.work.size();
  for (std::size_t i = 0; i < count; ++i) {
    const ScheduledWork& w = plan.work[i];
    // The requests are scattered over the heap: fetch a few ahead.
    if (i + 8 < count) __builtin_prefetch(plan.work[i + 8].request, 1);
    Request& r = *w.request;
    r.in_flight = false;
    r.kv_tokens += w.tokens;
    bool emits = !w.prefill;
    if (w.prefill && r.kv_tokens == r.prefill_target()) {
      r.prefilling = false;
      emits = true;
    }
    if (!emits) continue;
    r.generated_tokens += 1;
    if (r.generated_tokens == 1) {
      r.first_token = at;
    } else {
      const SimTime this_gap = at - r.last_token;
      if (gaps > 0 && this_gap != gap) {
        observer_.on_token_gaps(id_, gap.seconds(), gaps);
        gaps = 0;
      }
      gap = this_gap;
      ++gaps;
    }
    r.last_token = at;
    if (later_steps > 0) {
      r.kv_tokens += later_steps;
      r.generated_tokens += later_steps;
      r.last_token = last_at;
    }
    if (r.finished()) finished.push_back(&r);
  }
  if (gaps > 0) observer_.on_token_gaps(id_, gap.seconds(), gaps);
}

std::vector<Request*> Replica::complete(std::int64_t batch, SimTime now) {
  const auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                               [batch](const InFlight& f) { return f.batch == batch; });
  if (it == in_flight_.end()) {
    throw InvariantError("replica " + std::to_string(id_) + ": unknown batch completed");
  }
  BatchPlan plan = std::move(it->plan);
  in_flight_.erase(it);
  // A request finishes in a batch it is part of, so the batch's requests are all to look at.
  std::vector<Request*> finished;
  if (run_.batch != batch) {
    emit_tokens(plan, now, finished);
  } else {
    run_.batch = -1;
    const auto steps = static_cast<std::int64_t>(run_.ends.size());
    if (run_.ends.back() != now) {
      throw InvariantError("time_monotonic",
                           "replica " + std::to_string(id_) + ": a decode run completed off time",
                           now);
    }
    if (steps == run_limit_) run_limit_ = std::min<std::int64_t>(run_limit_ * 2, 1 << 16);
    // The first iteration's tokens, and the requests' state after the last; the steps in
    // between change nothing that the checks and reports below read.
    emit_tokens(plan, run_.ends.front(), finished, steps - 1, now);
    // Iterations 2..steps, as each would have been launched: the allocator grows every
    // sequence by one token, then the iteration is checked (its plan, the first one's, was
    // checked at launch) and reported.
    run_.usages.resize(static_cast<std::size_t>(steps - 1));
    allocator_->grow_decode_rounds(plan.decode_sequences, run_.next_final_tokens, run_.usages);
    for (std::size_t k = 1; k < run_.ends.size(); ++k)
      check_usage(run_.usages[k - 1], run_.ends[k - 1]);
    iterations_ += steps - 1;
    observer_.on_decode_run(DecodeRunIterations{run_.first, run_.ends, run_.usages});
  }
  spare_plans_.push_back(std::move(plan));
  if (finished.empty()) return finished;
  std::sort(finished.begin(), finished.end(),
            [](const Request* a, const Request* b) { return a->spec.id < b->spec.id; });
  for (Request* r : finished) {
    allocator_->release(r->spec.id);
    queues_.remove_running(r);
  }
  outstanding_ -= static_cast<std::int64_t>(finished.size());
  return finished;
}

}  // namespace servesim
