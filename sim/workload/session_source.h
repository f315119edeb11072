#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "sim/core/rng.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/composed_source.h"
#include "sim/workload/duration_sampler.h"
#include "sim/workload/token_count_sampler.h"
#include "sim/workload/workload_source.h"
#include "sim/workload/workload_spec.h"

namespace servesim {

// Sessions of turns (multi-turn chat, agents calling tools): sessions start at the arrivals of
// `session_arrivals` (any process; a closed-loop one starts a user's next session when its
// last one ends), and each turn after the first is sent a gap (think time, tool latency) after
// the turn before it finished: closed loop within a session. Turn k's prompt is everything the
// session holds so far (the shared system prompt, then every earlier turn's new tokens and
// output, in order) plus its own new tokens; its content (last_content) is those segments in
// order and then its output as a segment of its own, so the next turn hits every earlier one.
//
// A session's numbers (its turns, each turn's new tokens and output, each gap) come from its
// own random stream, derived from `session_seed` and its index (0, 1, ... in start order), so
// they do not depend on how fast the server answers. A turn cut at the maximum sequence length
// enters the context as served (its cut output); a rejected turn ends its session (its user
// gives up: a longer next prompt would be rejected too).
class SessionWorkloadSource final : public IWorkloadSource {
 public:
  SessionWorkloadSource(const SessionSpec& spec, std::unique_ptr<IArrivalProcess> session_arrivals,
                        Rng arrival_rng, std::uint64_t session_seed, StopConditions stop);

  std::optional<RequestSpec> next() override;
  bool exhausted() const override { return stopped_; }
  std::shared_ptr<const TokenContent> last_content() const override { return last_content_; }
  void on_request_done(const RequestSpec& request, SimTime now) override;
  void on_request_rejected(const RequestSpec& request, SimTime now) override;
  bool take_back(const RequestSpec& pending) override;

  // Sessions started so far (for tests and reports).
  std::int64_t sessions_started() const { return sessions_started_; }

 private:
  struct Session {
    explicit Session(Rng stream) : rng(stream) {}
    Rng rng;
    std::uint64_t id = 0;    // its segments' ids derive from it
    std::int64_t turns = 1;  // in all
    std::int64_t turn = 0;   // the turn ready or in flight
    TokenContent context;    // the system prompt and every earlier turn's segments
    std::int64_t context_tokens = 0;
    std::int64_t input_tokens = 0;   // the current turn's new tokens
    std::int64_t output_tokens = 0;  // the current turn's output, as asked for
  };
  // A turn whose arrival is known; earliest first, then in the order released.
  struct Ready {
    SimTime time;
    std::uint64_t sequence = 0;
    std::int64_t session = 0;
    bool operator>(const Ready& other) const {
      return time != other.time ? time > other.time : sequence > other.sequence;
    }
  };

  void pull_start();
  void start_session(SimTime time);
  void prepare_turn(Session& session);
  void end_session(std::int64_t session, SimTime now);
  std::int64_t session_of(const RequestSpec& request);
  void refresh_stopped();
  bool before_end(SimTime time) const { return !stop_.end_time || time < *stop_.end_time; }

  TokenCountSampler turns_;
  TokenCountSampler first_input_;
  TokenCountSampler next_input_;
  TokenCountSampler output_;
  TokenCountSampler last_output_;
  DurationSampler gap_;
  std::int64_t extra_turns_;
  TokenContent system_prompt_;  // empty, or the one segment every session starts with
  std::unique_ptr<IArrivalProcess> arrivals_;
  Rng arrival_rng_;
  std::uint64_t session_seed_;
  StopConditions stop_;

  std::optional<SimTime> next_start_;  // the next session start, looked ahead
  bool starts_done_ = false;
  std::unordered_map<std::int64_t, Session> sessions_;  // started and not ended
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready_;
  std::unordered_map<std::int64_t, std::int64_t> in_flight_;  // request id -> session
  std::uint64_t released_ = 0;
  std::int64_t sessions_started_ = 0;
  std::int64_t emitted_ = 0;
  SimTime last_arrival_;
  // The last request handed out, for take_back.
  Ready last_ready_;
  SimTime arrival_before_last_;
  std::shared_ptr<const TokenContent> last_content_;
  bool stopped_ = false;
};

}  // namespace servesim
