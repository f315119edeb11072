#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "sim/scheduler/request.h"

namespace servesim {

// Storage for the requests in flight on a cluster. A finished request's slot serves the
// next arrival, so a run allocates only up to its peak of requests in flight, and requests
// that are served together sit in recently used memory. Addresses are stable until release.
// Slots come in chunks of kChunk (128 KiB): an overloaded run, whose queues grow to most of
// its requests, allocates once per kChunk arrivals rather than once per few.
class RequestPool {
 public:
  // A fresh request (default state), valid until release.
  Request* acquire() {
    Request* request;
    if (free_.empty()) {
      if (used_in_chunk_ == kChunk) {
        chunks_.push_back(std::make_unique<Request[]>(kChunk));
        used_in_chunk_ = 0;
      }
      request = &chunks_.back()[used_in_chunk_++];
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
  static constexpr std::size_t kChunk = 1024;
  std::vector<std::unique_ptr<Request[]>> chunks_;  // never moved: slots stay put
  std::size_t used_in_chunk_ = kChunk;              // slots handed out of the last chunk
  std::vector<Request*> free_;
  std::size_t live_ = 0;
};

}  // namespace servesim
