#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "sim/scheduler/request.h"

namespace servesim {

// Storage for the requests in flight on a cluster. A finished request's slot serves the
// next arrival, so a run allocates only up to its peak of requests in flight, and requests
// that are served together sit in recently used memory. Addresses are stable until release.
class RequestPool {
 public:
  // A fresh request (default state), valid until release.
  Request* acquire() {
    Request* request;
    if (free_.empty()) {
      request = &slots_.emplace_back();
    } else {
      request = free_.back();
      free_.pop_back();
      *request = Request{};
    }
    ++live_;
    return request;
  }
  void release(Request* request) {
    free_.push_back(request);
    --live_;
  }
  std::size_t live() const { return live_; }

 private:
  std::deque<Request> slots_;  // a deque never moves what it holds
  std::vector<Request*> free_;
  std::size_t live_ = 0;
};

}  // namespace servesim
