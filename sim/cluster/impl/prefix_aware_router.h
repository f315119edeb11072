#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/cluster/router.h"

namespace servesim {

// Weights of the prefix-aware router's score.
// servesim's defaults: a replica holding more than half the prompt wins even when it is the
// busiest and the others are idle.
struct PrefixAwareWeights {
  double prefix = 2.0;  // per share of the prompt a replica's cache holds
  double load = 1.0;    // per unfinished request, relative to the busiest replica's
};

// Scores each replica by the share of the request's prompt its prefix cache holds and by its
// load, as llm-d's scheduler weighs its prefix-cache and queue scorers and Dynamo's KV router
// trades prefix overlap against active load:
//   score = prefix x cached_prefix_tokens / prompt_tokens
//           - load x outstanding_requests / max(1, the most outstanding of any replica)
// and routes to the highest; ties go to the fewest unfinished requests, then the lowest index.
// A request whose workload says nothing of its content hits nowhere, and then load decides.
// Reads the views and the cached prefixes, not the KV memory, so bulk decoding stays on.
class PrefixAwareRouter final : public IRouter {
 public:
  explicit PrefixAwareRouter(const PrefixAwareWeights& weights = {}) : weights_(weights) {}

  std::int32_t route(const RequestSpec& request, std::span<const ReplicaView> replicas) override {
    std::int64_t busiest = 1;
    for (const ReplicaView& r : replicas)
      busiest = std::max(busiest, r.outstanding_requests);
    const double prompt = static_cast<double>(std::max<std::int64_t>(1, request.prompt_tokens));
    const auto score = [&](const ReplicaView& r) {
      return weights_.prefix * static_cast<double>(r.cached_prefix_tokens) / prompt -
             weights_.load * static_cast<double>(r.outstanding_requests) /
                 static_cast<double>(busiest);
    };
    std::size_t best = 0;
    double best_score = score(replicas[0]);
    for (std::size_t i = 1; i < replicas.size(); ++i) {
      const double s = score(replicas[i]);
      if (s > best_score || (s == best_score && replicas[i].outstanding_requests <
                                                    replicas[best].outstanding_requests)) {
        best = i;
        best_score = s;
      }
    }
    return static_cast<std::int32_t>(best);
  }
  bool reads_prefixes() const override { return true; }

 private:
  PrefixAwareWeights weights_;
};

}  // namespace servesim
