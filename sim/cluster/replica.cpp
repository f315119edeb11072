#include "sim/cluster/replica.h"

#include <algorithm>

#include "sim/cluster/iteration_checks.h"
#include "sim/core/error.h"
#include "sim/scheduler/request_lifecycle.h"

namespace servesim {

Replica::Replica(std::int32_t id, std::unique_ptr<IKvCacheAllocator> allocator,
                 std::unique_ptr<IBatchScheduler> scheduler, const IExecutionTimeModel& time_model,
                 std::int64_t pipeline_stages, std::int64_t max_sequence_tokens,
                 IServingObserver& observer, const SwapLink& swap, bool bulk_decode,
                 MaxLenPolicy max_len_policy)
    : id_(id),
      allocator_(std::move(allocator)),
      scheduler_(std::move(scheduler)),
      queues_(scheduler_->queues()),
      time_model_(time_model),
      pipeline_stages_(pipeline_stages),
      max_sequence_tokens_(max_sequence_tokens),
      max_len_policy_(max_len_policy),
      observer_(observer),
      swap_(swap),
      budget_(scheduler_->budget()) {
  IDecodeRoundAllocator* rounds = allocator_->decode_rounds();
  if (bulk_decode && pipeline_stages == 1 && scheduler_->decode_plans_repeat() &&
      rounds != nullptr) {
    runs_.emplace(*rounds, time_model_, scheduler_->judges_preempting_plans());
  }
}

LengthAdmission Replica::admission(const RequestSpec& request) const {
  LengthAdmission admission = admit_within_max_len(request, max_sequence_tokens_, max_len_policy_);
  if (!admission.reject_reason) {
    admission.reject_reason = scheduler_->reject_reason(admission.served, *allocator_);
  }
  return admission;
}

bool Replica::reserve_kv(std::int64_t request, std::int64_t tokens) {
  if (!allocator_->can_admit(tokens, tokens)) return false;
  allocator_->admit(kReservedKv + request, tokens, tokens);
  return true;
}

void Replica::speculate(Speculation& speculation) {
  if (!scheduler_->speculate(speculation.num_speculative_tokens())) {
    throw InputError("speculative", "the scheduler cannot speculate; expected scheduler vllm_v1");
  }
  speculation_ = &speculation;
  runs_.reset();
}

void Replica::plan_one_step_ahead() {
  if (pipeline_stages_ > 1) {
    throw InputError("pp",
                     "planning one step ahead (an engine whose host work overlaps the "
                     "GPU) needs one pipeline stage");
  }
  plans_ahead_ = true;
}

void Replica::enqueue(Request* request, SimTime now) {
  request->replica = id_;
  ++outstanding_;
  if (plans_ahead_ && !in_flight_.empty()) {
    staged_.push_back({request, now});
    return;
  }
  scheduler_->enqueue(request);
}

bool Replica::staged_queue_behind_waiting() const {
  return std::all_of(staged_.begin(), staged_.end(), [this](const Staged& s) {
    return scheduler_->queues_behind_waiting(*s.request);
  });
}

void Replica::release_staged() {
  std::size_t ready = 0;
  while (ready < staged_.size() && !(last_launch_ < staged_[ready].arrived))
    ++ready;
  if (ready == 0) {
    if (has_work()) return;
    ready = staged_.size();
  }
  for (std::size_t i = 0; i < ready; ++i)
    scheduler_->enqueue(staged_[i].request);
  staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(ready));
}

ReplicaView Replica::view() const {
  const KvUsage usage = allocator_->usage(0);
  ReplicaView v;
  v.replica = id_;
  v.outstanding_requests = outstanding_;
  v.waiting_requests = static_cast<std::int64_t>(queues_.waiting().size() + staged_.size());
  v.running_requests = static_cast<std::int64_t>(queues_.running().size());
  v.swapped_requests = static_cast<std::int64_t>(queues_.swapped().size());
  v.waiting_tokens = queues_.waiting_tokens();
  for (const Staged& s : staged_)
    v.waiting_tokens += s.request->spec.prompt_tokens;
  v.kv_capacity_tokens = usage.capacity_tokens;
  v.kv_used_tokens = usage.used();
  v.kv_free_tokens = usage.free + usage.cached;  // cached blocks are free for allocation
  return v;
}

BatchPlan Replica::spare_plan() {
  BatchPlan plan;
  if (!spare_plans_.empty()) {
    plan = std::move(spare_plans_.back());
    spare_plans_.pop_back();
    plan.clear();
  }
  // The cost model's windows, so that prompt chunks add the windowed layers' sums.
  plan.shape.spans = time_model_.attention_spans();
  return plan;
}

std::int64_t Replica::run_steps_for(const BatchPlan& plan) {
  // With prefix caching, a decode iteration of a request with content may name a block that a
  // waiting request's prompt shares, and so admit it sooner than a decode run would let it
  // (a run names its blocks at its end), or that a look-up from outside finds (a router, a
  // hand-off): such plans run one iteration at a time. Blocks past a request's content are
  // named as its own, which no other request can hit: decoding past the content names nothing
  // another could find.
  // Requests held back by planning ahead join the step after this one: no run may pass it,
  // unless they queue behind a waiting request that the run's plans do not admit.
  const bool hits_may_grow = plan.has_content &&
                             (cache_read_from_outside_ || !queues_.waiting().empty()) &&
                             names_content(plan);
  // A run goes on through rounds that preempt (which free memory) unless a reservation
  // waits for memory, the prefix cache is read from outside, or the plan has content.
  const bool frees_awaited_room = room_awaited_ && !plan.preempted.empty();
  const bool through_preemption = !room_awaited_ && !cache_read_from_outside_ && !plan.has_content;
  // A plan with prompt chunks starts a run when the scheduler says decode plans follow it.
  const bool repeats = plan.shape.prefill_sequences > 0 ? scheduler_->last_plan_then_decodes()
                                                        : scheduler_->last_plan_repeats();
  return runs_ && !hits_may_grow && !frees_awaited_room && repeats && staged_queue_behind_waiting()
             ? runs_->steps_for(plan, queues_.running().size(),
                                through_preemption ? scheduler_.get() : nullptr)
             : 1;
}

double Replica::step_price_s(const BatchPlan& plan) const {
  // Swaps, and loads from a prefix cache's host tier, copy KV blocks over the host link
  // before the forward pass can use the memory.
  const std::int64_t copied = plan.swap_in_tokens + plan.swap_out_tokens + plan.host_load_tokens;
  const double swap_s = swap_.bytes_per_s > 0 ? static_cast<double>(copied) *
                                                    swap_.bytes_per_token / swap_.bytes_per_s
                                              : 0.0;
  double step_s = time_model_.estimate(plan.shape).total_time_s + swap_s;
  if (speculation_ != nullptr) step_s += speculation_->price_step(plan, step_s);
  return step_s;
}

std::optional<Replica::Launch> Replica::try_launch(SimTime now) {
  if (stage_busy(now)) return std::nullopt;
  if (!staged_.empty()) release_staged();
  if (!has_work()) return std::nullopt;
  BatchPlan plan = spare_plan();
  scheduler_->plan(*allocator_, plan);
  // A step may preempt and schedule nothing (vLLM V1: the one running request finds no block
  // and goes back to waiting, the memory held by finished prefills whose KV has not left yet):
  // the step is empty and the next one is planned at once. Each such plan shrinks the running
  // queue, so this ends.
  while (plan.empty() && !plan.preempted.empty() && plan.swap_in_tokens == 0) {
    plan.clear();
    scheduler_->plan(*allocator_, plan);
  }
  if (plan.empty()) {
    if (!plan.preempted.empty() || plan.swap_in_tokens > 0) {
      throw InvariantError("replica " + std::to_string(id_) +
                           ": the scheduler preempted requests but planned no work");
    }
    spare_plans_.push_back(std::move(plan));
    return std::nullopt;
  }
  // With one stage nothing is planned while a batch is in flight, so only pipelines mark
  // requests in flight: a plan of decodes alone on one stage is not walked here.
  const bool mark_in_flight = pipeline_stages_ > 1;
  if (mark_in_flight || plan.shape.prefill_sequences > 0) {
    for (const ScheduledWork& w : plan.work) {
      if (mark_in_flight) w.request->in_flight = true;
      if (w.prefill) schedule(*w.request, now);  // a request is first scheduled for its prompt
    }
  }
  // A plan that starts a decode run is priced with the whole run, in one call.
  const std::int64_t run_steps = run_steps_for(plan);
  const double first_s = run_steps > 1 ? runs_->price(plan) : step_price_s(plan);
  const SimTime stage = SimTime::duration_from_seconds(first_s);
  SimTime total = stage;
  for (std::int64_t s = 1; s < pipeline_stages_; ++s)
    total += stage;

  const KvUsage usage = allocator_->usage(next_final_tokens());
  check_kv_usage(id_, usage, now);
  check_batch_budget(id_, plan, budget_, now);
  const IterationRecord record = iteration_record(id_, now, total, plan, usage);
  observer_.on_iteration(record);
  ++iterations_;

  const std::int64_t batch = next_batch_++;
  last_launch_ = now;
  SimTime done = now + total;
  stage_free_at_ = now + stage;
  if (run_steps > 1) {
    done = runs_->start(batch, record, done, next_final_tokens());
    stage_free_at_ = done;
  }
  in_flight_.push_back({batch, std::move(plan)});
  return Launch{batch, stage_free_at_, done};
}

std::optional<SimTime> Replica::cut_run(SimTime now, RunCut cut) {
  const std::optional<SimTime> end = runs_->cut(now, cut);
  if (end) stage_free_at_ = *end;
  return end;
}

std::optional<SimTime> Replica::cut_decode_run(SimTime now, const Request& newcomer) {
  if (!runs_ || scheduler_->queues_behind_waiting(newcomer)) return std::nullopt;
  return cut_run(now, {.planned_ahead = plans_ahead_});
}

std::optional<SimTime> Replica::cut_decode_run(SimTime now) {
  if (!runs_) return std::nullopt;
  return cut_run(now, {});
}

std::optional<SimTime> Replica::settle_decode_run(SimTime now) {
  if (!runs_ || !runs_->in_flight()) return std::nullopt;
  const std::optional<SimTime> end = cut_run(now, {.after_launches = true});
  const auto run = std::find_if(in_flight_.begin(), in_flight_.end(),
                                [this](const InFlight& f) { return runs_->is_run(f.batch); });
  if (run != in_flight_.end()) runs_->settle(run->plan);
  return end;
}

template <bool kDecodeRun>
void Replica::complete_steps(const BatchPlan& plan, SimTime at, std::vector<Request*>& finished) {
  // A decode run's requests decode in its later iterations too: those kept to its end in
  // all of them, and those a stretch of it preempted up to that stretch's first iteration.
  // The plan's requests from `kept` on are the next stretch's victims, met in plan order.
  std::span<const DecodeRoundStretch> stretches;
  std::span<const RunBatch> batches;
  std::size_t stretch = 0;
  std::size_t kept = plan.work.size();
  std::int64_t later_steps = 0;
  SimTime last_at;
  if constexpr (kDecodeRun) {
    stretches = runs_->stretches();
    batches = runs_->batches();
    stretch = stretches.size() - 1;
    kept = stretches[stretch].sequences;
    later_steps = runs_->steps() - 1;
    last_at = runs_->end_of(static_cast<std::size_t>(later_steps));
  }
  // Gaps of equal length are reported together, in plan order, whether iterations run one
  // at a time or in bulk, so the metrics see the same calls either way.
  SimTime gap;
  std::int64_t gaps = 0;
  const std::size_t count = plan.work.size();
  for (std::size_t i = 0; i < count; ++i) {
    if constexpr (kDecodeRun) {
      while (i >= kept) {
        const std::size_t preempted_at = batches[stretch].first_iteration;
        later_steps = static_cast<std::int64_t>(preempted_at) - 1;
        last_at = runs_->end_of(preempted_at - 1);
        kept = stretches[--stretch].sequences;
      }
    }
    const ScheduledWork& w = plan.work[i];
    // The requests are scattered over the heap: fetch a few ahead.
    if (i + 8 < count) __builtin_prefetch(plan.work[i + 8].request, 1);
    Request& r = *w.request;
    const SimTime previous_token = r.last_token;
    if (speculation_ != nullptr && !w.prefill) [[unlikely]] {
      speculation_->complete(r, w.tokens, at);  // a burst of tokens, one gap before it
    } else if (!complete_step(r, w.tokens, at)) {
      continue;
    }
    if (r.generated_tokens > 1) {
      const SimTime this_gap = at - previous_token;
      if (gaps > 0 && this_gap != gap) {
        observer_.on_token_gaps(id_, gap.seconds(), gaps);
        gaps = 0;
      }
      gap = this_gap;
      ++gaps;
    }
    if constexpr (kDecodeRun) complete_decode_steps(r, later_steps, last_at);
    if (r.finished()) finished.push_back(&r);
  }
  if (gaps > 0) observer_.on_token_gaps(id_, gap.seconds(), gaps);
}

bool Replica::names_content(const BatchPlan& plan) const {
  const std::int64_t block = allocator_->prefix_block_tokens();
  return std::any_of(plan.work.begin(), plan.work.end(), [block](const ScheduledWork& w) {
    const Request& r = *w.request;
    if (!r.has_content) return false;
    // The first block the step completes holds token computed_tokens; the content's blocks
    // end at block_hashes x block tokens.
    return w.prefill ||
           r.computed_tokens < static_cast<std::int64_t>(r.block_hashes->size()) * block;
  });
}

void Replica::commit_computed(const BatchPlan& plan) {
  // After the decode run's later iterations grew the allocator, so that every block the
  // requests' computed tokens fill is in their tables.
  for (const ScheduledWork& w : plan.work) {
    const Request& r = *w.request;
    if (r.has_content) allocator_->commit_computed(r.spec.id, r.computed_tokens);
  }
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
  if (!runs_ || !runs_->is_run(batch)) {
    complete_steps<false>(plan, now, finished);
  } else {
    const std::int64_t steps = runs_->finish(now);
    // The steps after the first were launched where the one before ended: staged requests
    // that arrived by the last one's launch join the next plan (release_staged).
    last_launch_ = runs_->last_start(last_launch_);
    // The first iteration's steps, and the requests' state after the last; the steps in
    // between change nothing that the checks and reports below read.
    complete_steps<true>(plan, runs_->first_end(), finished);
    runs_->report_later_iterations(plan, observer_, [this](const KvUsage& usage, SimTime at) {
      check_kv_usage(id_, usage, at);
    });
    // The requests the run preempted leave for the waiting queue, as its rounds' plans
    // would have sent them (the allocator has released their KV), the newest first.
    const std::span<const DecodeRoundStretch> stretches = runs_->stretches();
    if (stretches.size() > 1) {
      preempted_.clear();
      for (std::size_t s = 1; s < stretches.size(); ++s) {
        for (std::size_t i = stretches[s - 1].sequences; i-- > stretches[s].sequences;)
          preempted_.push_back(plan.work[i].request);
      }
      scheduler_->preempted_in_run(preempted_);
    }
    iterations_ += steps - 1;
    scheduler_->on_decode_plans_skipped(steps - 1);
  }
  if (plan.has_content) commit_computed(plan);
  spare_plans_.push_back(std::move(plan));
  if (finished.empty()) return finished;
  std::sort(finished.begin(), finished.end(),
            [](const Request* a, const Request* b) { return a->spec.id < b->spec.id; });
  for (Request* r : finished) {
    if (!holds_finished_kv_) allocator_->release(r->spec.id);
    finish(*r);
  }
  scheduler_->retire(finished);
  outstanding_ -= static_cast<std::int64_t>(finished.size());
  return finished;
}

}  // namespace servesim
