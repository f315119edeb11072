#include "sim/scheduler/request_queues.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace servesim {

void RequestQueues::insert_in_order(std::deque<Request*>& queue, Request* request) const {
  // Requests usually come after everyone queued (arrivals), or early on (a victim goes back
  // before the arrivals that came after it): a search from the front either way.
  if (queue.empty() || order_.before(*queue.back(), *request)) {
    queue.push_back(request);
    return;
  }
  const auto position = std::find_if(queue.begin(), queue.end(), [&](const Request* queued) {
    return order_.before(*request, *queued);
  });
  queue.insert(position, request);
}

void RequestQueues::enqueue(Request* request) {
  insert_in_order(waiting_, request);
  waiting_tokens_ += request->uncomputed_tokens();
}

Request* RequestQueues::pop_waiting() {
  Request* request = waiting_.front();
  waiting_.pop_front();
  waiting_tokens_ -= request->uncomputed_tokens();
  return request;
}

Request* RequestQueues::pop_swapped() {
  Request* request = swapped_.front();
  swapped_.pop_front();
  return request;
}

void RequestQueues::park_swapped(Request* request) {
  insert_in_order(swapped_, request);
}

void RequestQueues::add_running(Request* request) {
  if (running_.empty() || order_.before(*running_.back(), *request)) {
    running_.push_back(request);  // the usual case: a new request comes last
    return;
  }
  running_.insert(
      std::upper_bound(running_.begin(), running_.end(), request,
                       [&](const Request* a, const Request* b) { return order_.before(*a, *b); }),
      request);
}

void RequestQueues::remove_running(Request* request) {
  const auto it = std::find(running_.rbegin(), running_.rend(), request);
  if (it == running_.rend()) {
    throw InvariantError("request " + std::to_string(request->spec.id) + " is not running");
  }
  running_.erase(std::next(it).base());
}

void RequestQueues::retire(std::span<Request* const> finished) {
  if (finished.empty()) return;
  // Found by address, from the first finished request on.
  auto out = std::find(running_.begin(), running_.end(), finished.front());
  if (finished.size() == 1 && out != running_.end()) {
    running_.erase(out);  // the usual case
    return;
  }
  std::size_t next = 0;
  for (auto in = out; in != running_.end(); ++in) {
    if (next < finished.size() && *in == finished[next]) {
      ++next;
    } else {
      *out++ = *in;
    }
  }
  running_.erase(out, running_.end());
  if (next == finished.size()) return;
  // Not in the queue's order: the rest are found by their state.
  const std::size_t before = running_.size();
  std::erase_if(running_, [](const Request* r) { return r->state == RequestState::Finished; });
  if (before - running_.size() != finished.size() - next) {
    throw InvariantError("a finished request is not running");
  }
}

}  // namespace servesim
