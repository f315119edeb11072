#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "sim/scheduler/queue_order.h"
#include "sim/scheduler/request.h"

namespace servesim {

// Host memory for KV blocks swapped out of the GPU, in tokens. Zero capacity means
// preemption recomputes instead.
struct SwapSpace {
  std::int64_t capacity_tokens = 0;
  std::int64_t used_tokens = 0;
};

// The requests one scheduler holds, by state, each queue kept in the scheduler's order
// (IQueueOrder): `waiting` (new, and preempted by recompute: no KV memory), `running` (KV
// memory held), `swapped` (KV in host memory). Requests move between the queues only
// through these methods, which keep the orders, and the request's state through
// request_lifecycle.h; nothing here searches by request id.
class RequestQueues {
 public:
  explicit RequestQueues(const IQueueOrder& order, std::int64_t swap_capacity_tokens = 0)
      : order_(order) {
    swap_.capacity_tokens = swap_capacity_tokens;
  }
  RequestQueues(const RequestQueues&) = delete;
  RequestQueues& operator=(const RequestQueues&) = delete;

  const std::deque<Request*>& waiting() const { return waiting_; }
  const std::vector<Request*>& running() const { return running_; }
  const std::deque<Request*>& swapped() const { return swapped_; }
  SwapSpace& swap() { return swap_; }
  const SwapSpace& swap() const { return swap_; }
  bool empty() const { return waiting_.empty() && running_.empty() && swapped_.empty(); }
  // Tokens the waiting requests would compute if admitted now (prompt plus any generated
  // tokens a preempted one recomputes).
  std::int64_t waiting_tokens() const { return waiting_tokens_; }

  // A request joins the waiting queue, in order: routed here, or preempted by recompute
  // (it goes back before the arrivals that came after it).
  void enqueue(Request* request);
  // Takes the first waiting request out, for admission.
  Request* pop_waiting();
  // The first swapped request leaves host memory (see SwapSpace) for the running queue.
  Request* pop_swapped();
  // A running request moves to host memory, in order.
  void park_swapped(Request* request);

  // An admitted (or swapped-in) request joins the running ones, in order.
  void add_running(Request* request);
  // Takes a running request out (preempted). Found by address from the end of the queue,
  // where preemption's victims are.
  void remove_running(Request* request);
  // Takes finished requests out of `running`. `finished` is in the queue's order (it is
  // then one pass over the running queue comparing addresses); any other order costs a
  // second pass that reads the requests' states.
  void retire(std::span<Request* const> finished);

 private:
  void insert_in_order(std::deque<Request*>& queue, Request* request) const;

  const IQueueOrder& order_;
  std::deque<Request*> waiting_;
  std::vector<Request*> running_;
  std::deque<Request*> swapped_;
  SwapSpace swap_;
  std::int64_t waiting_tokens_ = 0;
};

}  // namespace servesim
