#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
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

  // Records held now (for tests of the bound on what waits).
  std::size_t waiting_requests() const noexcept { return waiting_.size(); }
  std::size_t waiting_iterations() const noexcept { return waiting_iterations_; }

 private:
  struct Waiting {
    std::optional<RequestRecord> record;  // empty: not reported yet
    std::optional<std::array<double, kTtftParts>> parts;
  };
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

  std::vector<IRecordSink*> next_;
  std::int64_t next_id_ = 0;     // the id the file lists next
  std::deque<Waiting> waiting_;  // ids next_id_, next_id_ + 1, ...

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
