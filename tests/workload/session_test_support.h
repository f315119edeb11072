#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/workload/workload_source.h"

namespace servesim::test {

// One request as a session test saw it: when it arrived, what it was made of, and when it
// finished (or that it was rejected).
struct ServedRequest {
  RequestSpec request;
  TokenContent content;
  SimTime done;
  bool rejected = false;
};

// What the fake server does with a request: rejects it (nullopt) or serves it with this
// output (the request's own, or a cut one).
using ServePolicy = std::function<std::optional<std::int64_t>(const RequestSpec&)>;

// Drives a source as the cluster does (one arrival pending at a time, completions in time
// order, take_back after each completion), serving every request in `service` with no
// queueing. Ties: an arrival before a completion at the same time.
inline std::vector<ServedRequest> serve(IWorkloadSource& source, SimTime service,
                                        const ServePolicy& policy = nullptr) {
  std::vector<ServedRequest> seen;
  std::multimap<SimTime, std::pair<RequestSpec, std::size_t>> completions;
  std::optional<RequestSpec> pending;
  std::shared_ptr<const TokenContent> pending_content;
  const auto ask = [&] {
    if (pending) return;
    pending = source.next();
    pending_content = source.last_content();
  };
  const auto after_done = [&] {
    if (pending && source.take_back(*pending)) pending.reset();
    ask();
  };
  ask();
  while (pending || !completions.empty()) {
    if (pending && (completions.empty() || pending->arrival <= completions.begin()->first)) {
      const RequestSpec request = *pending;
      pending.reset();
      seen.push_back({request, pending_content ? *pending_content : TokenContent{}, {}, false});
      const std::optional<std::int64_t> output =
          policy ? policy(request) : std::optional(request.output_tokens);
      if (!output) {
        seen.back().rejected = true;
        seen.back().done = request.arrival;
        source.on_request_rejected(request, request.arrival);
        after_done();
        continue;
      }
      RequestSpec served = request;
      served.output_tokens = *output;
      completions.insert({request.arrival + service, {served, seen.size() - 1}});
      ask();
      continue;
    }
    const auto [time, entry] = *completions.begin();
    completions.erase(completions.begin());
    seen[entry.second].done = time;
    source.on_request_done(entry.first, time);
    after_done();
  }
  return seen;
}

}  // namespace servesim::test
