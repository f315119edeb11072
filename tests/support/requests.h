#pragma once

// Requests built by hand, for the tests of the request lifecycle, the queues and the policies
// that move requests between them.

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/scheduler/request.h"

namespace servesim::test {

inline Request request_of(std::int64_t id, std::int64_t prompt_tokens, std::int64_t output_tokens) {
  Request r;
  r.spec = RequestSpec{id, {}, prompt_tokens, output_tokens};
  return r;
}

// Requests that stay where they are (queues hold pointers): request(i) has id i.
class RequestArena {
 public:
  Request* add(std::int64_t prompt_tokens, std::int64_t output_tokens) {
    requests_.push_back(std::make_unique<Request>(
        request_of(static_cast<std::int64_t>(requests_.size()), prompt_tokens, output_tokens)));
    return requests_.back().get();
  }
  Request* request(std::int64_t id) const {
    return requests_.at(static_cast<std::size_t>(id)).get();
  }

 private:
  std::vector<std::unique_ptr<Request>> requests_;
};

// The ids of `queue`'s requests, in its order.
template <typename Queue>
std::vector<std::int64_t> ids_of(const Queue& queue) {
  std::vector<std::int64_t> out;
  for (const Request* r : queue)
    out.push_back(r->spec.id);
  return out;
}

}  // namespace servesim::test
