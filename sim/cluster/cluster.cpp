#include "sim/cluster/cluster.h"

#include <algorithm>
#include <span>

#include "sim/core/error.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

Cluster::Cluster(std::vector<std::unique_ptr<Replica>> replicas, std::unique_ptr<IRouter> router,
                 IWorkloadSource& source, IServingObserver& observer, SimTime frontend_latency,
                 std::optional<DisaggregatedPools> pools)
    : replicas_(std::move(replicas)),
      router_(std::move(router)),
      source_(source),
      observer_(observer),
      launch_pending_(replicas_.size(), false),
      views_(replicas_.size()),
      router_reads_views_(router_->reads_views()),
      last_completion_(replicas_.size()),
      frontend_latency_(frontend_latency),
      pools_(std::move(pools)) {
  if (replicas_.empty()) throw InputError("replicas", "expected at least one replica");
  if (pools_) {
    if (pools_->prefill_replicas < 1 ||
        static_cast<std::size_t>(pools_->prefill_replicas) >= replicas_.size() ||
        !pools_->decode_router || !pools_->handoff) {
      throw InvariantError(
          "a disaggregated cluster needs prefill and decode replicas, a decode "
          "router and a hand-off");
    }
    router_reads_views_ = router_reads_views_ || pools_->decode_router->reads_views();
    reservations_.emplace(replicas_.size() - static_cast<std::size_t>(pools_->prefill_replicas));
    for (std::int32_t i = 0; i < pools_->prefill_replicas; ++i)
      replicas_[static_cast<std::size_t>(i)]->hold_finished_kv();
    if (pools_->decode_router->reads_kv_memory()) {
      for (std::size_t i = entry_replicas(); i < replicas_.size(); ++i)
        replicas_[i]->disable_bulk_decode();
    }
    // A prefill's end looks the decode replicas' prefix caches up (decode_cached_tokens).
    for (std::size_t i = entry_replicas(); i < replicas_.size(); ++i)
      replicas_[i]->prefix_cache_read_from_outside();
  }
  if (router_->reads_prefixes()) {
    for (std::size_t i = 0; i < entry_replicas(); ++i)
      replicas_[i]->prefix_cache_read_from_outside();
  }
  // Replicas are identical: the first one's block size names every replica's blocks.
  prefix_block_tokens_ = replicas_.front()->allocator().prefix_block_tokens();
  if (replicas_.size() >= static_cast<std::size_t>(kReplicaSlots)) {
    throw InputError("replicas", "expected fewer than " + std::to_string(kReplicaSlots));
  }
  // Such a router reads every replica's KV use at every arrival, which a decode run in bulk
  // does not keep current.
  if (router_->reads_kv_memory()) {
    for (std::size_t i = 0; i < entry_replicas(); ++i)
      replicas_[i]->disable_bulk_decode();
  }
  for (std::size_t i = 0; i < replicas_.size(); ++i)
    views_[i] = replicas_[i]->view();
}

ClusterRunStats Cluster::run() {
  try {
    schedule_next_arrival();
    std::uint32_t events = 0;
    while (!queue_.empty()) {
      // Now and then, between events, the observer hears how far iterations are reported.
      if (++events % kReportBoundEvents == 0) report_iteration_bound(queue_.now());
      const auto event = queue_.pop();
      switch (event.payload.kind) {
        case EventPhase::Arrival:
          arrival_pending_ = false;
          on_arrival(event.payload.request);
          schedule_next_arrival();
          break;
        case EventPhase::BatchDone:
          on_batch_done(event.payload.replica, event.payload.batch);
          break;
        case EventPhase::Launch:
          on_launch(event.payload.replica);
          break;
        case EventPhase::TransferDone:
          on_transfer_done(event.payload.batch);
          break;
        case EventPhase::KvExpiry:
          on_kv_expiry(event.payload.replica, event.payload.batch);
          break;
      }
    }
    report_iteration_bound(queue_.now());
    if (requests_.live() != 0 || stats_.finished + stats_.rejected != stats_.arrived ||
        (pools_ && (pools_->handoff->in_flight() != 0 || reservations_->held() != 0 ||
                    reservations_->waiting() != 0 || !expired_.empty())) ||
        !source_.exhausted()) {
      throw InvariantError("requests_terminate",
                           "the run ended with " + std::to_string(requests_.live()) +
                               " requests unfinished (arrived " + std::to_string(stats_.arrived) +
                               ", finished " + std::to_string(stats_.finished) + ", rejected " +
                               std::to_string(stats_.rejected) + ")" +
                               (source_.exhausted() ? "" : " and the workload not exhausted"),
                           queue_.now());
    }
  } catch (const InvariantError& e) {
    if (e.time()) throw;
    throw e.at(queue_.now());
  }
  stats_.end_time = queue_.now();
  stats_.events = queue_.events_pushed();
  for (const auto& replica : replicas_)
    stats_.iterations += replica->iterations();
  return stats_;
}

void Cluster::report_iteration_bound(SimTime now) {
  SimTime bound = now;
  for (const auto& replica : replicas_)
    bound = std::min(bound, replica->unreported_iterations_from(now));
  observer_.on_iterations_reported_before(bound);
}

EventQueue<Cluster::Event>::EventId Cluster::push(SimTime time, const Event& event) {
  return queue_.push(time, static_cast<int>(event.kind) * kReplicaSlots + event.replica, event);
}

void Cluster::schedule_next_arrival() {
  if (arrival_pending_) return;
  if (const auto next = source_.next()) {
    pending_arrival_event_ =
        push(next->arrival + frontend_latency_, Event{EventPhase::Arrival, 0, 0, *next});
    pending_arrival_ = *next;
    arrival_pending_ = true;
    if (prefix_block_tokens_ > 0) pending_content_ = source_.last_content();
  }
}

void Cluster::on_arrival(const RequestSpec& spec) {
  ++stats_.arrived;
  const std::shared_ptr<const TokenContent> content = std::move(pending_content_);
  pending_content_.reset();
  // Replicas are identical, so one answers for all whether the request can ever fit, and
  // with how many output tokens; disaggregated, a decode replica (which holds the whole
  // request) and then a prefill replica (which holds its prompt and first token) answer.
  LengthAdmission admission = replicas_.back()->admission(spec);
  if (pools_ && !admission.reject_reason) {
    RequestSpec prompt_only = admission.served;
    prompt_only.output_tokens = 1;
    if (auto prefill = replicas_.front()->admission(prompt_only); prefill.reject_reason) {
      admission.reject_reason = std::move(prefill.reject_reason);
    }
  }
  if (admission.reject_reason) {
    ++stats_.rejected;
    observer_.on_request_rejected(spec, *admission.reject_reason, queue_.now());
    on_request_done(spec, /*rejected=*/true);
    return;
  }
  std::shared_ptr<const std::vector<std::uint64_t>> hashes;
  if (content) {
    hashes = std::make_shared<const std::vector<std::uint64_t>>(
        block_hashes(*content, prefix_block_tokens_));
  }
  Request* request = requests_.acquire();
  request->spec = admission.served;
  request->requested_output_tokens = spec.output_tokens;
  if (hashes) {
    request->block_hashes = std::move(hashes);
    request->has_content = true;
  }
  if (!pools_) {
    deliver(route_among(*router_, 0, replicas_.size(), request->spec, request->block_hashes.get()),
            request);
    return;
  }
  // Disaggregated. The decode replica is picked first when the hand-off needs it before the
  // prefill: to reserve its room (SGLang), or to look its prefix cache up (selective
  // disaggregation, as llm-d decides it: a prompt whose tokens that replica does not cache are
  // few enough is prefilled there, with no transfer).
  std::int32_t decode = -1;
  std::int64_t uncached = request->spec.prompt_tokens;
  if (pools_->order == KvHandoffOrder::ReserveBeforePrefill ||
      pools_->local_prefill_max_tokens > 0) {
    decode = route_to_decode(request->spec, *request);
    uncached -= decode_cached_tokens(*request, decode);
  }
  if (pools_->local_prefill_max_tokens > 0 && uncached <= pools_->local_prefill_max_tokens) {
    pools_->handoff->on_local_prefill(spec.id);
    deliver(pools_->prefill_replicas + decode, request);
    return;
  }
  // The prefill side computes the prompt and samples one token.
  to_decode_[spec.id] = Outputs{admission.served.output_tokens, spec.output_tokens, decode};
  request->spec.output_tokens = 1;
  request->requested_output_tokens = 1;
  if (pools_->order == KvHandoffOrder::ReserveBeforePrefill) {
    // The decode side sets the prompt's KV aside first; the prefill starts once it has.
    wait_for_decode_room(decode, {false, request, 0, std::max<std::int64_t>(1, uncached)});
    return;
  }
  deliver(route_among(*router_, 0, entry_replicas(), request->spec, request->block_hashes.get()),
          request);
}

std::int32_t Cluster::route_among(IRouter& router, std::size_t first, std::size_t count,
                                  const RequestSpec& request,
                                  const std::vector<std::uint64_t>* hashes) {
  if (router.reads_prefixes()) {
    PrefixKey key;
    key.sequence = request.id;
    if (hashes != nullptr) key.block_hashes = *hashes;
    key.tokens = request.prompt_tokens;
    for (std::size_t i = first; i < first + count; ++i)
      views_[i].cached_prefix_tokens =
          hashes != nullptr ? replicas_[i]->allocator().cached_prefix_tokens(key) : 0;
  }
  const std::span<const ReplicaView> candidates(views_.data() + first, count);
  const std::int32_t picked = router.route(request, candidates);
  if (picked < 0 || static_cast<std::size_t>(picked) >= count) {
    throw InvariantError("router picked replica " + std::to_string(picked) + " of " +
                         std::to_string(count));
  }
  return static_cast<std::int32_t>(first) + picked;
}

void Cluster::end_run_at(std::int32_t target, std::optional<SimTime> end) {
  if (!end) return;
  const PendingCompletion run = last_completion_[static_cast<std::size_t>(target)];
  queue_.cancel(run.event);
  if (*end == queue_.now()) {
    on_batch_done(target, run.batch);
  } else {
    push_batch_done(*end, target, run.batch);
  }
}

void Cluster::settle_run(std::int32_t target) {
  end_run_at(target, replicas_[static_cast<std::size_t>(target)]->settle_decode_run(queue_.now()));
}

void Cluster::deliver(std::int32_t target, Request* request) {
  const auto index = static_cast<std::size_t>(target);
  // A decode run on the target ends where the newcomer may join the batch after it, as it
  // would have with iterations launched one at a time.
  end_run_at(target, replicas_[index]->cut_decode_run(queue_.now(), *request));
  replicas_[index]->enqueue(request, queue_.now());
  refresh_view(target);
  request_launch(target);
}

void Cluster::refresh_view(std::int32_t replica) {
  if (!router_reads_views_) return;
  const auto index = static_cast<std::size_t>(replica);
  views_[index] = replicas_[index]->view();
}

void Cluster::push_batch_done(SimTime time, std::int32_t replica, std::int64_t batch) {
  const auto index = static_cast<std::size_t>(replica);
  last_completion_[index] = {push(time, Event{EventPhase::BatchDone, replica, batch, {}}), batch};
}

void Cluster::request_launch(std::int32_t replica) {
  const auto index = static_cast<std::size_t>(replica);
  if (launch_pending_[index] || replicas_[index]->stage_busy(queue_.now())) return;
  launch_pending_[index] = true;
  push(queue_.now(), Event{EventPhase::Launch, replica, 0, {}});
}

void Cluster::on_launch(std::int32_t replica) {
  const auto index = static_cast<std::size_t>(replica);
  launch_pending_[index] = false;
  if (pools_ && replica >= pools_->prefill_replicas) {
    replicas_[index]->set_room_awaited(
        reservations_->waiting_on(replica - pools_->prefill_replicas));
  }
  const auto launch = replicas_[index]->try_launch(queue_.now());
  if (!launch) return;
  refresh_view(replica);
  push_batch_done(launch->done_at, replica, launch->batch);
  if (launch->stage_free_at < launch->done_at) {
    // Pipeline: the first stage frees before the batch is done and can take the next one.
    push(launch->stage_free_at, Event{EventPhase::Launch, replica, 0, {}});
    launch_pending_[index] = true;
  }
}

void Cluster::on_batch_done(std::int32_t replica, std::int64_t batch) {
  Replica& r = *replicas_[static_cast<std::size_t>(replica)];
  const auto finished = r.complete(batch, queue_.now());
  const bool prefills = pools_ && replica < pools_->prefill_replicas;
  for (Request* request : finished) {
    if (prefills) {
      hand_off(replica, request);
      continue;
    }
    if (pools_) {
      if (const auto parts = pools_->handoff->on_decoded(*request)) {
        observer_.on_ttft_parts(request->spec.id, *parts);
      }
    }
    ++stats_.finished;
    observer_.on_request_finished(*request, queue_.now());
    const RequestSpec spec = request->spec;
    requests_.release(request);
    on_request_done(spec);
  }
  if (pools_ && !prefills) reserve_decode_room(replica - pools_->prefill_replicas);
  refresh_view(replica);
  request_launch(replica);
}

void Cluster::on_request_done(const RequestSpec& spec, bool rejected) {
  if (rejected) {
    source_.on_request_rejected(spec, queue_.now());
  } else {
    source_.on_request_done(spec, queue_.now());
  }
  // A closed-loop source may now know of an arrival earlier than the one pending.
  if (arrival_pending_ && source_.take_back(pending_arrival_)) {
    queue_.cancel(pending_arrival_event_);
    arrival_pending_ = false;
    pending_content_.reset();
  }
  schedule_next_arrival();
}

}  // namespace servesim
