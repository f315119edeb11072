#include "sim/workload/session_source.h"

#include <string>

#include "sim/core/error.h"
#include "sim/workload/content_namespaces.h"

namespace servesim {

SessionWorkloadSource::SessionWorkloadSource(const SessionSpec& spec,
                                             std::unique_ptr<IArrivalProcess> session_arrivals,
                                             Rng arrival_rng, std::uint64_t session_seed,
                                             StopConditions stop)
    : turns_(spec.turns),
      first_input_(spec.first_input),
      next_input_(spec.next_input),
      output_(spec.output),
      last_output_(spec.last_output),
      gap_(spec.gap),
      extra_turns_(spec.extra_turns),
      arrivals_(std::move(session_arrivals)),
      arrival_rng_(arrival_rng),
      session_seed_(session_seed),
      stop_(stop) {
  if (spec.system_prompt_tokens > 0) {
    // One system prompt for every session: id 0 of the namespace, sessions counting from 1.
    system_prompt_.push_back({mix_ids(kSessionContent, 0), spec.system_prompt_tokens});
  }
  refresh_stopped();
}

void SessionWorkloadSource::pull_start() {
  if (next_start_ || starts_done_) return;
  next_start_ = arrivals_->next(arrival_rng_);
  if (!next_start_ && arrivals_->exhausted()) starts_done_ = true;
  // Starts come in order: once one falls past the end, none will come before it.
  if (next_start_ && !before_end(*next_start_)) {
    next_start_.reset();
    starts_done_ = true;
  }
}

void SessionWorkloadSource::start_session(SimTime time) {
  const std::int64_t index = sessions_started_++;
  Session session(Rng(mix_ids(session_seed_, static_cast<std::uint64_t>(index))));
  session.id = mix_ids(kSessionContent, static_cast<std::uint64_t>(index) + 1);
  session.turns = turns_.sample(session.rng) + extra_turns_;
  session.context = system_prompt_;
  session.context_tokens = system_prompt_.empty() ? 0 : system_prompt_.front().tokens;
  prepare_turn(session);
  sessions_.emplace(index, std::move(session));
  ready_.push({time, released_++, index});
}

void SessionWorkloadSource::prepare_turn(Session& session) {
  session.input_tokens = (session.turn == 0 ? first_input_ : next_input_).sample(session.rng);
  const bool last = session.turn == session.turns - 1;
  session.output_tokens = (last ? last_output_ : output_).sample(session.rng);
}

std::optional<RequestSpec> SessionWorkloadSource::next() {
  if (stopped_) return std::nullopt;
  pull_start();
  if (next_start_ && (ready_.empty() || *next_start_ < ready_.top().time)) {
    start_session(*next_start_);
    next_start_.reset();
  }
  if (ready_.empty() || !before_end(ready_.top().time)) {
    refresh_stopped();
    return std::nullopt;
  }
  const Ready ready = ready_.top();
  ready_.pop();
  if (ready.time < last_arrival_) {
    throw InvariantError("session workload: a turn released at " + std::to_string(ready.time.ns()) +
                         " ns after one handed out at " + std::to_string(last_arrival_.ns()) +
                         " ns was not taken back");
  }
  const Session& session = sessions_.at(ready.session);
  const auto turn = static_cast<std::uint64_t>(session.turn);
  auto content = std::make_shared<TokenContent>(session.context);
  content->push_back({mix_ids(session.id, 2 * turn), session.input_tokens});
  content->push_back({mix_ids(session.id, 2 * turn + 1), session.output_tokens});
  last_content_ = std::move(content);

  const RequestSpec request{emitted_++, ready.time, session.context_tokens + session.input_tokens,
                            session.output_tokens};
  in_flight_.emplace(request.id, ready.session);
  last_ready_ = ready;
  arrival_before_last_ = last_arrival_;
  last_arrival_ = ready.time;
  refresh_stopped();
  return request;
}

std::int64_t SessionWorkloadSource::session_of(const RequestSpec& request) {
  const auto it = in_flight_.find(request.id);
  if (it == in_flight_.end()) {
    throw InvariantError("session workload told of a request it has not in flight (id " +
                         std::to_string(request.id) + ")");
  }
  const std::int64_t session = it->second;
  in_flight_.erase(it);
  return session;
}

void SessionWorkloadSource::on_request_done(const RequestSpec& request, SimTime now) {
  const std::int64_t index = session_of(request);
  Session& session = sessions_.at(index);
  const auto turn = static_cast<std::uint64_t>(session.turn);
  // The output as served: cut at the maximum sequence length, the context holds what came.
  session.context.push_back({mix_ids(session.id, 2 * turn), session.input_tokens});
  session.context.push_back({mix_ids(session.id, 2 * turn + 1), request.output_tokens});
  session.context_tokens += session.input_tokens + request.output_tokens;
  if (++session.turn == session.turns) {
    end_session(index, now);
    return;
  }
  const SimTime gap = gap_.sample(session.rng);
  prepare_turn(session);
  ready_.push({now + gap, released_++, index});
  refresh_stopped();
}

void SessionWorkloadSource::on_request_rejected(const RequestSpec& request, SimTime now) {
  end_session(session_of(request), now);
}

void SessionWorkloadSource::end_session(std::int64_t session, SimTime now) {
  sessions_.erase(session);
  arrivals_->on_request_done(now);  // a closed-loop user starts its next session
  refresh_stopped();
}

bool SessionWorkloadSource::take_back(const RequestSpec& pending) {
  if (emitted_ == 0 || pending.id != emitted_ - 1 || ready_.empty() ||
      !(ready_.top().time < pending.arrival) || !in_flight_.contains(pending.id)) {
    return false;
  }
  in_flight_.erase(pending.id);
  --emitted_;
  ready_.push(last_ready_);
  last_arrival_ = arrival_before_last_;
  last_content_.reset();
  stopped_ = false;
  refresh_stopped();
  return true;
}

void SessionWorkloadSource::refresh_stopped() {
  if (stop_.max_requests && emitted_ >= *stop_.max_requests) {
    stopped_ = true;
    return;
  }
  pull_start();
  const bool nothing_ready = ready_.empty() || !before_end(ready_.top().time);
  stopped_ = nothing_ready && in_flight_.empty() && !next_start_ && starts_done_;
}

}  // namespace servesim
