#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/study/slo.h"

namespace servesim {

// One way to build a replica: a hardware profile and its tensor and pipeline degrees.
struct ReplicaShape {
  std::string hardware;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  // The price of one of its GPUs for an hour, when the shape gives one ("h100-sxm:4@3.10").
  std::optional<double> price_per_gpu_hour_usd;
  std::int64_t gpus_per_replica() const { return tp * pp; }
  std::string label() const;  // "h100-sxm tp2 pp1"
};

struct ReplicaPoint {
  std::int64_t replicas = 0;
  nlohmann::json summary;
  SloVerdict verdict;
};

struct ReplicaSearchResult {
  ReplicaShape shape;
  std::optional<std::int64_t> replicas;  // fewest that meet the SLO; none up to the maximum
  std::vector<ReplicaPoint> points;      // in the order evaluated
  const ReplicaPoint* answer() const;
  // The point that stopped the search undecided (SloVerdict::undecided), if one did: the
  // answer is then unknown below a passing count, if any.
  const ReplicaPoint* undecided() const;
};

// Runs one round of (shape, replica count) points, possibly in parallel, and returns one run
// summary per point in the same order.
struct ReplicaTrial {
  std::size_t shape = 0;  // index into the shapes searched
  std::int64_t replicas = 0;
};
using ReplicaEvaluator =
    std::function<std::vector<nlohmann::json>(const std::vector<ReplicaTrial>& trials)>;

// Fewest replicas of each shape that meet `target`, assuming more replicas never hurt:
// doubles the count from 1 until it passes, then bisects between the last failure and the
// pass. The shapes are searched side by side, one count per shape per round. A shape's
// search stops at a failure that does not depend on the load (it does not fit, or it rejects
// requests), which more replicas would repeat, and at a point that its run length leaves
// undecided, which more replicas would not settle (its requests take too long for the run).
std::vector<ReplicaSearchResult> search_fewest_replicas(const SloTarget& target,
                                                        const std::vector<ReplicaShape>& shapes,
                                                        std::int64_t max_replicas,
                                                        const ReplicaEvaluator& evaluate);

}  // namespace servesim
