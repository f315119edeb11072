#include "sim/workload/composed_source.h"

#include <algorithm>

#include "sim/core/error.h"

namespace servesim {

ComposedWorkloadSource::ComposedWorkloadSource(std::unique_ptr<IArrivalProcess> arrivals,
                                               std::unique_ptr<ILengthDistribution> lengths,
                                               Rng arrival_rng, Rng length_rng, StopConditions stop)
    : arrivals_(std::move(arrivals)),
      lengths_(std::move(lengths)),
      arrival_rng_(arrival_rng),
      length_rng_(length_rng),
      stop_(stop) {
  if (const auto capacity = lengths_->capacity()) {
    stop_.max_requests = std::min(stop_.max_requests.value_or(*capacity), *capacity);
  }
  look_ahead();
}

void ComposedWorkloadSource::look_ahead() {
  if (lookahead_ || stopped_) return;
  if (stop_.max_requests && emitted_ >= *stop_.max_requests) {
    stopped_ = true;
    return;
  }
  const std::optional<SimTime> arrival = arrivals_->next(arrival_rng_);
  if (!arrival) {
    stopped_ = arrivals_->exhausted();
    return;
  }
  if (*arrival < last_arrival_) {
    throw InvariantError("workload arrivals went backwards in time");
  }
  if (stop_.end_time && *arrival >= *stop_.end_time) {
    stopped_ = true;
    return;
  }
  lookahead_ = arrival;
}

std::optional<RequestSpec> ComposedWorkloadSource::next() {
  look_ahead();
  if (!lookahead_) return std::nullopt;
  const LengthPair lengths = lengths_->sample(length_rng_);
  last_content_ = lengths_->last_content();
  RequestSpec request{emitted_++, *lookahead_, lengths.prompt_tokens, lengths.output_tokens};
  last_arrival_ = *lookahead_;
  lookahead_.reset();
  look_ahead();
  return request;
}

void ComposedWorkloadSource::on_request_done(const RequestSpec& request, SimTime now) {
  if (request.id < 0 || request.id >= emitted_) {
    throw InvariantError("workload told of a request it never emitted (id " +
                         std::to_string(request.id) + ")");
  }
  arrivals_->on_request_done(now);
  look_ahead();
}

}  // namespace servesim
