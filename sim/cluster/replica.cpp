#include "sim/cluster/replica.h"

#include <algorithm>

#include "sim/core/error.h"

namespace servesim {

Replica::Replica(std::int32_t id, std::unique_ptr<IKvCacheAllocator> allocator,
                 std::unique_ptr<IBatchScheduler> scheduler, const IExecutionTimeModel& time_model,
                 std::int64_t pipeline_stages, std::int64_t max_sequence_tokens,
                 IServingObserver& observer, const SwapLink& swap)
    : id_(id),
      allocator_(std::move(allocator)),
      scheduler_(std::move(scheduler)),
      time_model_(time_model),
      pipeline_stages_(pipeline_stages),
      max_sequence_tokens_(max_sequence_tokens),
      observer_(observer),
      swap_(swap) {
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

std::optional<Replica::Launch> Replica::try_launch(SimTime now) {
  if (stage_busy(now) || !has_work()) return std::nullopt;
  BatchPlan plan = scheduler_->plan(queues_, *allocator_);
  if (plan.empty()) {
    if (!plan.preempted.empty() || plan.swap_in_tokens > 0) {
      throw InvariantError("replica " + std::to_string(id_) +
                           ": the scheduler preempted requests but planned no work");
    }
    return std::nullopt;
  }
  for (const ScheduledWork& w : plan.work) {
    w.request->in_flight = true;
    if (!w.request->scheduled) {
      w.request->scheduled = true;
      w.request->first_scheduled = now;
    }
  }
  const IterationCost cost = time_model_.estimate(plan.shape);
  // Swaps copy KV blocks over the host link before the forward pass can use the memory.
  const double swap_s = swap_.bytes_per_s > 0
                            ? static_cast<double>(plan.swap_in_tokens + plan.swap_out_tokens) *
                                  swap_.bytes_per_token / swap_.bytes_per_s
                            : 0.0;
  const SimTime stage = SimTime::duration_from_seconds(cost.total_time_s + swap_s);
  SimTime total = stage;
  for (std::int64_t s = 1; s < pipeline_stages_; ++s)
    total += stage;

  const KvUsage usage =
      allocator_->usage(queues_.waiting.empty() ? 0 : queues_.waiting.front()->final_tokens());
  if (usage.used() > usage.capacity_tokens) {
    throw InvariantError("replica " + std::to_string(id_) + ": KV memory exceeds capacity");
  }
  IterationRecord record;
  record.replica = id_;
  record.start_s = now.seconds();
  record.duration_s = total.seconds();
  record.batch_size = static_cast<std::int32_t>(plan.work.size());
  record.prefill_tokens = plan.shape.prefill_tokens;
  record.decode_tokens = plan.shape.decode_sequences;
  record.preempted = static_cast<std::int32_t>(plan.preempted.size());
  record.kv_used_tokens = usage.used();
  record.kv_capacity_tokens = usage.capacity_tokens;
  record.kv_memory =
      KvMemoryTokens{usage.token_states, usage.reserved, usage.internal_fragmentation,
                     usage.external_fragmentation, usage.free};
  observer_.on_iteration(record);

  const std::int64_t batch = next_batch_++;
  in_flight_.emplace(batch, std::move(plan));
  stage_free_at_ = now + stage;
  return Launch{batch, now + stage, now + total};
}

std::vector<Request*> Replica::complete(std::int64_t batch, SimTime now) {
  const auto it = in_flight_.find(batch);
  if (it == in_flight_.end()) {
    throw InvariantError("replica " + std::to_string(id_) + ": unknown batch completed");
  }
  const BatchPlan plan = std::move(it->second);
  in_flight_.erase(it);
  for (const ScheduledWork& w : plan.work) {
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
      r.first_token = now;
    } else {
      observer_.on_token_gaps((now - r.last_token).seconds(), 1);
    }
    r.last_token = now;
  }
  std::vector<Request*> finished;
  for (Request* r : queues_.running) {
    if (r->finished() && !r->in_flight) finished.push_back(r);
  }
  for (Request* r : finished) {
    allocator_->release(r->spec.id);
    queues_.running.erase(std::find(queues_.running.begin(), queues_.running.end(), r));
    --outstanding_;
  }
  std::sort(finished.begin(), finished.end(),
            [](const Request* a, const Request* b) { return a->spec.id < b->spec.id; });
  return finished;
}

}  // namespace servesim
