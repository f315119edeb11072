#include "sim/study/replica_search.h"

#include "sim/core/error.h"

namespace servesim {
namespace {

// The search over one shape's replica count.
class CountSearch {
 public:
  explicit CountSearch(std::int64_t max) : max_(max) {}

  // The next count to try, or nothing when the answer is known.
  std::optional<std::int64_t> next() const {
    if (hopeless_ || undecided_) return std::nullopt;
    if (!passing_) {
      const std::int64_t n = failing_ == 0 ? 1 : failing_ * 2;
      if (failing_ >= max_) return std::nullopt;
      return std::min(n, max_);
    }
    if (*passing_ - failing_ <= 1) return std::nullopt;
    return failing_ + (*passing_ - failing_) / 2;
  }
  void record(std::int64_t n, const SloVerdict& verdict) {
    if (verdict.met) {
      passing_ = n;
    } else if (verdict.undecided) {
      undecided_ = true;
    } else {
      failing_ = n;
      hopeless_ = verdict.fails_at_any_load;
    }
  }
  std::optional<std::int64_t> answer() const { return passing_; }

 private:
  std::int64_t max_;
  std::int64_t failing_ = 0;  // most replicas known to fail (0: none tried)
  std::optional<std::int64_t> passing_;
  bool hopeless_ = false;   // a failure that more replicas do not remove
  bool undecided_ = false;  // a point too long for the run to judge
};

}  // namespace

std::string ReplicaShape::label() const {
  return hardware + " tp" + std::to_string(tp) + " pp" + std::to_string(pp);
}

const ReplicaPoint* ReplicaSearchResult::answer() const {
  for (const auto& point : points) {
    if (replicas && point.replicas == *replicas) return &point;
  }
  return nullptr;
}

const ReplicaPoint* ReplicaSearchResult::undecided() const {
  for (const auto& point : points) {
    if (point.verdict.undecided) return &point;
  }
  return nullptr;
}

std::vector<ReplicaSearchResult> search_fewest_replicas(const SloTarget& target,
                                                        const std::vector<ReplicaShape>& shapes,
                                                        std::int64_t max_replicas,
                                                        const ReplicaEvaluator& evaluate) {
  if (target.empty()) throw UsageError("capacity: give at least one --slo");
  if (max_replicas < 1) throw UsageError("capacity: --max-replicas must be >= 1");
  std::vector<CountSearch> searches(shapes.size(), CountSearch(max_replicas));
  std::vector<ReplicaSearchResult> results;
  for (const auto& shape : shapes)
    results.push_back(ReplicaSearchResult{shape, std::nullopt, {}});
  while (true) {
    std::vector<ReplicaTrial> trials;
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      if (const auto n = searches[s].next()) trials.push_back({s, *n});
    }
    if (trials.empty()) break;
    const auto summaries = evaluate(trials);
    if (summaries.size() != trials.size()) {
      throw InvariantError("replica search: results do not match the trials");
    }
    for (std::size_t i = 0; i < trials.size(); ++i) {
      ReplicaPoint point{trials[i].replicas, summaries[i], judge(target, summaries[i])};
      searches[trials[i].shape].record(point.replicas, point.verdict);
      results[trials[i].shape].points.push_back(std::move(point));
    }
  }
  for (std::size_t s = 0; s < shapes.size(); ++s)
    results[s].replicas = searches[s].answer();
  return results;
}

}  // namespace servesim
