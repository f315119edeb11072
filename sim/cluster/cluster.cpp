#include "sim/cluster/cluster.h"

#include "sim/core/error.h"

namespace servesim {

Cluster::Cluster(std::vector<std::unique_ptr<Replica>> replicas, std::unique_ptr<IRouter> router,
                 IWorkloadSource& source, IServingObserver& observer)
    : replicas_(std::move(replicas)),
      router_(std::move(router)),
      source_(source),
      observer_(observer),
      launch_pending_(replicas_.size(), false),
      loads_(replicas_.size()) {
  if (replicas_.empty()) throw InputError("replicas", "expected at least one replica");
  for (std::size_t i = 0; i < replicas_.size(); ++i)
    loads_[i] = replicas_[i]->load();
}

ClusterRunStats Cluster::run() {
  schedule_next_arrival();
  while (!queue_.empty()) {
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
    }
  }
  stats_.end_time = queue_.now();
  stats_.events = queue_.events_pushed();
  if (!live_.empty() || stats_.finished + stats_.rejected != stats_.arrived ||
      !source_.exhausted()) {
    throw InvariantError("the run ended with " + std::to_string(live_.size()) +
                         " requests unfinished (arrived " + std::to_string(stats_.arrived) +
                         ", finished " + std::to_string(stats_.finished) + ", rejected " +
                         std::to_string(stats_.rejected) + ") at " +
                         std::to_string(queue_.now().seconds()) + " s");
  }
  return stats_;
}

void Cluster::schedule_next_arrival() {
  if (arrival_pending_) return;
  if (const auto next = source_.next()) {
    queue_.push(next->arrival, static_cast<int>(EventPhase::Arrival),
                Event{EventPhase::Arrival, 0, 0, *next});
    arrival_pending_ = true;
  }
}

void Cluster::on_arrival(const RequestSpec& spec) {
  ++stats_.arrived;
  // Replicas are identical, so one answers for all whether the request can ever fit.
  if (const auto reason = replicas_.front()->reject_reason(spec)) {
    ++stats_.rejected;
    observer_.on_request_rejected(spec, *reason, queue_.now());
    on_request_done(spec);
    return;
  }
  const std::int32_t target = router_->route(spec, loads_);
  if (target < 0 || static_cast<std::size_t>(target) >= replicas_.size()) {
    throw InvariantError("router picked replica " + std::to_string(target) + " of " +
                         std::to_string(replicas_.size()));
  }
  auto request = std::make_unique<Request>();
  request->spec = spec;
  Request* raw = request.get();
  live_.emplace(spec.id, std::move(request));
  replicas_[static_cast<std::size_t>(target)]->enqueue(raw);
  refresh_load(target);
  request_launch(target);
}

void Cluster::refresh_load(std::int32_t replica) {
  const auto index = static_cast<std::size_t>(replica);
  loads_[index] = replicas_[index]->load();
}

void Cluster::request_launch(std::int32_t replica) {
  const auto index = static_cast<std::size_t>(replica);
  if (launch_pending_[index] || replicas_[index]->stage_busy(queue_.now())) return;
  launch_pending_[index] = true;
  queue_.push(queue_.now(), static_cast<int>(EventPhase::Launch),
              Event{EventPhase::Launch, replica, 0, {}});
}

void Cluster::on_launch(std::int32_t replica) {
  const auto index = static_cast<std::size_t>(replica);
  launch_pending_[index] = false;
  const auto launch = replicas_[index]->try_launch(queue_.now());
  if (!launch) return;
  refresh_load(replica);
  queue_.push(launch->done_at, static_cast<int>(EventPhase::BatchDone),
              Event{EventPhase::BatchDone, replica, launch->batch, {}});
  if (launch->stage_free_at < launch->done_at) {
    // Pipeline: the first stage frees before the batch is done and can take the next one.
    queue_.push(launch->stage_free_at, static_cast<int>(EventPhase::Launch),
                Event{EventPhase::Launch, replica, 0, {}});
    launch_pending_[index] = true;
  }
}

void Cluster::on_batch_done(std::int32_t replica, std::int64_t batch) {
  Replica& r = *replicas_[static_cast<std::size_t>(replica)];
  const auto finished = r.complete(batch, queue_.now());
  for (Request* request : finished) {
    ++stats_.finished;
    observer_.on_request_finished(*request, queue_.now());
    const RequestSpec spec = request->spec;
    live_.erase(spec.id);
    on_request_done(spec);
  }
  refresh_load(replica);
  request_launch(replica);
}

void Cluster::on_request_done(const RequestSpec& spec) {
  source_.on_request_done(spec, queue_.now());
  schedule_next_arrival();
}

}  // namespace servesim
