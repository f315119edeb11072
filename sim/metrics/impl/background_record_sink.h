#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/metrics/record_sink.h"

namespace servesim {

// Passes a run's records on to `next` on a thread of its own, in the order they were reported,
// so that ordering, formatting and writing them (RecordOrder, CsvRecordWriter: nearly all that
// `run --out` adds) overlap the simulation instead of following each event. The calls are
// copied into batches of kBatchCalls (large enough that the thread wakes a few hundred times a
// run: batches of 512 woke it too often to gain); the simulation waits only while
// kQueuedBatches batches wait for the thread, which bounds the memory at a few megabytes. The
// files are the same bytes as with `next` called directly: one thread replays the calls in
// order.
//
// begin() and finish() call `next` on the calling thread (finish() once the thread has replayed
// every batch). A failure of `next` on the thread (a write that fails, a record out of order)
// is rethrown on the calling thread at the next batch handed over or at finish(), and the calls
// after it are dropped. Destroyed without finish() (the run threw), it stops the thread and
// drops what was not replayed.
class BackgroundRecordSink final : public IRecordSink {
 public:
  static constexpr std::size_t kBatchCalls = 4096;
  static constexpr std::size_t kQueuedBatches = 4;

  explicit BackgroundRecordSink(IRecordSink& next);
  ~BackgroundRecordSink() override;
  BackgroundRecordSink(const BackgroundRecordSink&) = delete;
  BackgroundRecordSink& operator=(const BackgroundRecordSink&) = delete;

  void begin(const RecordLayout& layout) override;
  void on_request(const RequestRecord& record,
                  const std::array<double, kTtftParts>* ttft_parts) override;
  void on_iteration(const IterationRecord& record) override;
  void iterations_reported_before(double start_s) override;
  void finish() override;

 private:
  enum class Call : std::uint8_t { Request, Iteration, ReportedBefore };
  // Calls in the order made; each takes the next argument of its kind.
  struct Batch {
    std::vector<Call> calls;
    std::vector<HeldRequest> requests;
    std::vector<IterationRecord> iterations;
    std::vector<double> bounds_s;
    void clear() noexcept;
  };
  void hand_over_if_full() {
    if (current_.calls.size() >= kBatchCalls) hand_over();
  }
  // Queues current_ for the thread (waiting while kQueuedBatches wait) and takes a spare one;
  // rethrows the thread's failure.
  void hand_over();
  void replay(const Batch& batch);
  void work();  // the thread's loop
  // Tells the thread to stop once the queue is empty (or at once, `drop`) and joins it.
  void stop(bool drop);

  IRecordSink& next_;
  Batch current_;  // filled by the calling thread
  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_:
  std::deque<Batch> queued_;  // handed over, not replayed yet
  std::vector<Batch> spare_;  // replayed, kept for their vectors' capacity
  bool closing_ = false;      // no more batches: replay the queue, then return
  bool dropping_ = false;     // return without replaying the queue
  std::exception_ptr failure_;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace servesim
