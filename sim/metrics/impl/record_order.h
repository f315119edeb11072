#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/metrics/record_sink.h"

namespace servesim {

// Passes a run's records on in the order the files list them (record_columns.h: requests by
// id, iterations by start time, then replica, ties in the order reported), holding only
// those that cannot go yet:
// - a request waits for every request of a lower id (ids are 0, 1, 2, ... in arrival order
//   and each is reported once, finished or rejected), so what waits is about the requests in
//   flight;
// - an iteration waits until iterations_reported_before() passes its start (replicas report
//   their own iterations in time order, but a decode run's later iterations arrive when the
//   run ends).
// A record that arrives after the order has passed it, or a request id missing at finish(), is
// a simulator bug: InvariantError.
class RecordOrder final : public IRecordSink {
 public:
  explicit RecordOrder(std::vector<IRecordSink*> next) : next_(std::move(next)) {}

  void begin(const RecordLayout& layout) override;
  void on_request(const RequestRecord& record,
                  const std::array<double, kTtftParts>* ttft_parts) override;
  void on_iteration(const IterationRecord& record) override;
  void iterations_reported_before(double start_s) override;
  void finish() override;

  // What waits now (for tests of the bound on it): the request ids from the next one the
  // file lists to the highest reported, and the iterations held.
  std::size_t waiting_requests() const noexcept { return static_cast<std::size_t>(span_); }
  std::size_t waiting_iterations() const noexcept { return waiting_iterations_; }

 private:
  // Replicas with iterations waiting, by their earliest (start, replica): a k-way merge of
  // the replicas' own queues, each already in time order.
  struct Head {
    double start_s;
    std::int32_t replica;
    bool operator>(const Head& other) const {
      return start_s != other.start_s ? start_s > other.start_s : replica > other.replica;
    }
  };
  void pass_request(const RequestRecord& record, const std::array<double, kTtftParts>* parts);
  // Passes on the earliest waiting iteration of all replicas.
  void pass_earliest();

  // Makes room in the ring for ids up to next_id_ + `span` - 1.
  void grow_ring(std::int64_t span);

  std::vector<IRecordSink*> next_;
  std::int64_t next_id_ = 0;  // the id the file lists next
  std::int64_t span_ = 0;     // the highest id reported + 1 - next_id_; 0: none waits
  // Requests reported before next_id_ could go, in a ring indexed by id (its size a power of
  // two). Whether a slot holds its record is kept apart, in `held_`, so that finding out
  // touches no record: the records are many cache lines, written once and read once.
  std::vector<HeldRequest> ring_;
  std::vector<std::uint8_t> held_;

  // Iterations in report order. It keeps its storage: a std::deque frees and allocates a
  // block every few records as a replica's queue fills and empties all run long.
  class IterationQueue {
   public:
    bool empty() const noexcept { return head_ == records_.size(); }
    const IterationRecord& front() const noexcept { return records_[head_]; }
    void push_back(const IterationRecord& record) { records_.push_back(record); }
    void pop_front() {
      if (++head_ == records_.size()) {
        records_.clear();
        head_ = 0;
      } else if (head_ >= kCompactAfter && 2 * head_ >= records_.size()) {
        records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }

   private:
    static constexpr std::size_t kCompactAfter = 1024;  // passed records before they are dropped
    std::vector<IterationRecord> records_;
    std::size_t head_ = 0;
  };
  // One replica's iterations waiting, in report order, and the start of its last report.
  struct ReplicaQueue {
    IterationQueue waiting;
    double last_start_s = 0;
  };
  std::vector<ReplicaQueue> replicas_;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads_;
  std::size_t waiting_iterations_ = 0;
  bool passed_any_ = false;  // the last iteration passed on, for the order check
  double passed_start_s_ = 0;
  std::int32_t passed_replica_ = 0;
};

}  // namespace servesim
