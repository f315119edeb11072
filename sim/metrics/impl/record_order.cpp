#include "sim/metrics/impl/record_order.h"

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

void RecordOrder::pass_iteration(const IterationRecord& record) {
  passed_any_ = true;
  last_start_s_ = record.start_s;
  last_replica_ = record.replica;
  for (IRecordSink* sink : next_)
    sink->on_iteration(record);
}

void RecordOrder::on_request(const RequestRecord& record,
                             const std::array<double, kTtftParts>* ttft_parts) {
  if (record.id < next_id_) {
    throw InvariantError("request " + std::to_string(record.id) + " reported twice");
  }
  const auto slot = static_cast<std::size_t>(record.id - next_id_);
  if (slot == 0 && waiting_.empty()) {  // the common case: nothing waits
    pass_request(record, ttft_parts);
    ++next_id_;
    return;
  }
  if (waiting_.size() <= slot) waiting_.resize(slot + 1);
  Waiting& waiting = waiting_[slot];
  if (waiting.record) {
    throw InvariantError("request " + std::to_string(record.id) + " reported twice");
  }
  waiting.record = record;
  if (ttft_parts != nullptr) waiting.parts = *ttft_parts;
  while (!waiting_.empty() && waiting_.front().record) {
    const Waiting& front = waiting_.front();
    pass_request(*front.record, front.parts ? &*front.parts : nullptr);
    waiting_.pop_front();
    ++next_id_;
  }
}

void RecordOrder::on_iteration(const IterationRecord& record) {
  // The queue passes iterations on in order as long as none arrives before the last passed.
  if (passed_any_ && (record.start_s < last_start_s_ ||
                      (record.start_s == last_start_s_ && record.replica < last_replica_))) {
    throw InvariantError("iteration of replica " + std::to_string(record.replica) +
                         " starting at " + std::to_string(record.start_s) +
                         " s reported after later iterations were passed on");
  }
  iterations_.push({record, reported_++});
}

void RecordOrder::iterations_reported_before(double start_s) {
  while (!iterations_.empty() && iterations_.top().record.start_s < start_s) {
    pass_iteration(iterations_.top().record);
    iterations_.pop();
  }
  for (IRecordSink* sink : next_)
    sink->iterations_reported_before(start_s);
}

void RecordOrder::finish() {
  while (!iterations_.empty()) {
    pass_iteration(iterations_.top().record);
    iterations_.pop();
  }
  if (!waiting_.empty()) {
    throw InvariantError("request " + std::to_string(next_id_) +
                         " was never reported, finished or rejected");
  }
  for (IRecordSink* sink : next_)
    sink->finish();
}

}  // namespace servesim
