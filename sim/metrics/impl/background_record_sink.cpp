#include "sim/metrics/impl/background_record_sink.h"

#include <utility>

namespace servesim {

void BackgroundRecordSink::Batch::clear() noexcept {
  calls.clear();
  requests.clear();
  iterations.clear();
  bounds_s.clear();
}

BackgroundRecordSink::BackgroundRecordSink(IRecordSink& next)
    : next_(next), thread_([this] { work(); }) {}

BackgroundRecordSink::~BackgroundRecordSink() {
  if (thread_.joinable()) stop(/*drop=*/true);
}

void BackgroundRecordSink::begin(const RecordLayout& layout) {
  // Before any batch is handed over: the thread has not touched `next` yet.
  next_.begin(layout);
}

void BackgroundRecordSink::on_request(const RequestRecord& record,
                                      const std::array<double, kTtftParts>* ttft_parts) {
  current_.calls.push_back(Call::Request);
  current_.requests.emplace_back().hold(record, ttft_parts);
  hand_over_if_full();
}

void BackgroundRecordSink::on_iteration(const IterationRecord& record) {
  current_.calls.push_back(Call::Iteration);
  current_.iterations.push_back(record);
  hand_over_if_full();
}

void BackgroundRecordSink::iterations_reported_before(double start_s) {
  current_.calls.push_back(Call::ReportedBefore);
  current_.bounds_s.push_back(start_s);
  hand_over_if_full();
}

void BackgroundRecordSink::finish() {
  if (!current_.calls.empty()) hand_over();
  stop(/*drop=*/false);
  if (failure_) std::rethrow_exception(failure_);
  next_.finish();
}

void BackgroundRecordSink::hand_over() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queued_.size() < kQueuedBatches || failure_; });
  if (failure_) std::rethrow_exception(failure_);
  queued_.push_back(std::move(current_));
  if (spare_.empty()) {
    current_ = Batch();
  } else {
    current_ = std::move(spare_.back());
    spare_.pop_back();
  }
  changed_.notify_all();
}

void BackgroundRecordSink::stop(bool drop) {
  {
    const std::lock_guard lock(mutex_);
    closing_ = true;
    dropping_ = dropping_ || drop;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundRecordSink::replay(const Batch& batch) {
  std::size_t request = 0, iteration = 0, bound = 0;
  for (const Call call : batch.calls) {
    switch (call) {
      case Call::Request: {
        const HeldRequest& held = batch.requests[request++];
        next_.on_request(held.record, held.ttft_parts());
        break;
      }
      case Call::Iteration:
        next_.on_iteration(batch.iterations[iteration++]);
        break;
      case Call::ReportedBefore:
        next_.iterations_reported_before(batch.bounds_s[bound++]);
        break;
    }
  }
}

void BackgroundRecordSink::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !queued_.empty() || closing_; });
    if (dropping_ || queued_.empty()) return;
    Batch batch = std::move(queued_.front());
    queued_.pop_front();
    const bool failed = failure_ != nullptr;
    lock.unlock();
    std::exception_ptr error;
    if (!failed) {
      try {
        replay(batch);
      } catch (...) {
        error = std::current_exception();
      }
    }
    batch.clear();
    lock.lock();
    if (error) failure_ = error;
    spare_.push_back(std::move(batch));
    changed_.notify_all();
  }
}

}  // namespace servesim
