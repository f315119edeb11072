#include "sim/metrics/impl/record_order.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace servesim {

void RecordOrder::begin(const RecordLayout& layout) {
  for (IRecordSink* sink : next_)
    sink->begin(layout);
}

void RecordOrder::pass_request(const RequestRecord& record,
                               const std::array<double, kTtftParts>* parts) {
  for (IRecordSink* sink : next_)
    sink->on_request(record, parts);
}

void RecordOrder::pass_earliest() {
  const Head head = heads_.top();
  heads_.pop();
  IterationQueue& queue = replicas_[static_cast<std::size_t>(head.replica)].waiting;
  passed_any_ = true;
  passed_start_s_ = head.start_s;
  passed_replica_ = head.replica;
  for (IRecordSink* sink : next_)
    sink->on_iteration(queue.front());
  queue.pop_front();
  --waiting_iterations_;
  if (!queue.empty()) heads_.push({queue.front().start_s, head.replica});
}

void RecordOrder::grow_ring(std::int64_t span) {
  std::size_t size = std::max<std::size_t>(ring_.size(), 64);
  while (size < static_cast<std::size_t>(span))
    size *= 2;
  if (size == ring_.size()) return;
  std::vector<HeldRequest> ring(size);
  std::vector<std::uint8_t> held(size, 0);
  for (std::int64_t id = next_id_; id < next_id_ + span_; ++id) {
    const auto from = static_cast<std::size_t>(id) & (ring_.size() - 1);
    if (held_[from] == 0) continue;
    const auto to = static_cast<std::size_t>(id) & (size - 1);
    ring[to] = std::move(ring_[from]);
    held[to] = 1;
  }
  ring_ = std::move(ring);
  held_ = std::move(held);
}

void RecordOrder::on_request(const RequestRecord& record,
                             const std::array<double, kTtftParts>* ttft_parts) {
  if (record.id < next_id_) {
    throw InvariantError("request " + std::to_string(record.id) + " reported twice");
  }
  const std::int64_t slot = record.id - next_id_;
  if (slot == 0 && span_ == 0) {  // the common case: nothing waits
    pass_request(record, ttft_parts);
    ++next_id_;
    return;
  }
  if (slot >= static_cast<std::int64_t>(ring_.size())) grow_ring(slot + 1);
  const std::size_t mask = ring_.size() - 1;
  const auto at = static_cast<std::size_t>(record.id) & mask;
  if (held_[at] != 0) {
    throw InvariantError("request " + std::to_string(record.id) + " reported twice");
  }
  ring_[at].hold(record, ttft_parts);
  held_[at] = 1;
  span_ = std::max(span_, slot + 1);
  while (span_ > 0 && held_[static_cast<std::size_t>(next_id_) & mask] != 0) {
    const auto front = static_cast<std::size_t>(next_id_) & mask;
    const HeldRequest& ready = ring_[front];
    pass_request(ready.record, ready.ttft_parts());
    held_[front] = 0;
    ++next_id_;
    --span_;
  }
}

void RecordOrder::on_iteration(const IterationRecord& record) {
  if (record.replica < 0) {
    throw InvariantError("replica index must be >= 0, got " + std::to_string(record.replica));
  }
  const auto r = static_cast<std::size_t>(record.replica);
  if (replicas_.size() <= r) replicas_.resize(r + 1);
  ReplicaQueue& replica = replicas_[r];
  // Each replica's queue is in time order, and the merge passes iterations on in order as
  // long as none arrives before the last passed.
  if (record.start_s < replica.last_start_s ||
      (passed_any_ && (record.start_s < passed_start_s_ ||
                       (record.start_s == passed_start_s_ && record.replica < passed_replica_)))) {
    throw InvariantError("iteration of replica " + std::to_string(record.replica) +
                         " starting at " + std::to_string(record.start_s) +
                         " s reported after later iterations");
  }
  replica.last_start_s = record.start_s;
  if (replica.waiting.empty()) heads_.push({record.start_s, record.replica});
  replica.waiting.push_back(record);
  ++waiting_iterations_;
}

void RecordOrder::iterations_reported_before(double start_s) {
  while (!heads_.empty() && heads_.top().start_s < start_s)
    pass_earliest();
  for (IRecordSink* sink : next_)
    sink->iterations_reported_before(start_s);
}

void RecordOrder::finish() {
  while (!heads_.empty())
    pass_earliest();
  if (span_ > 0) {
    throw InvariantError("request " + std::to_string(next_id_) +
                         " was never reported, finished or rejected");
  }
  for (IRecordSink* sink : next_)
    sink->finish();
}

}  // namespace servesim
