#include "sim/study/layout_search.h"

#include <algorithm>
#include <cmath>

#include "sim/core/error.h"

namespace servesim {
namespace {

// The search over one layout's counts.
class LayoutCountSearch {
 public:
  LayoutCountSearch(RoleCounts start, std::int64_t max)
      : max_(max), next_{std::min(start.prefill, max), std::min(start.decode, max)} {}

  // The next counts to try, or nothing when the search is over.
  std::optional<RoleCounts> next() {
    while (true) {
      switch (phase_) {
        case Phase::Bracket:
          return next_;
        case Phase::Prefill:
          if (passing_.prefill - failing_ <= 1) {
            enter(Phase::Decode);
            continue;
          }
          return RoleCounts{failing_ + (passing_.prefill - failing_) / 2, passing_.decode};
        case Phase::Decode:
          if (passing_.decode - failing_ <= 1) {
            enter(Phase::Done);
            continue;
          }
          return RoleCounts{passing_.prefill, failing_ + (passing_.decode - failing_) / 2};
        case Phase::Done:
          return std::nullopt;
      }
    }
  }

  void record(RoleCounts counts, const SloVerdict& verdict) {
    if (phase_ == Phase::Bracket) {
      if (verdict.met) {
        passing_ = counts;
        answer_ = counts;
        enter(Phase::Prefill);
      } else if (verdict.fails_at_any_load || (counts.prefill >= max_ && counts.decode >= max_)) {
        enter(Phase::Done);
      } else {
        next_ = {std::min(2 * counts.prefill, max_), std::min(2 * counts.decode, max_)};
      }
      return;
    }
    if (verdict.met) {
      passing_ = counts;
      answer_ = counts;
    } else {
      failing_ = phase_ == Phase::Prefill ? counts.prefill : counts.decode;
    }
  }

  std::optional<RoleCounts> answer() const { return answer_; }

 private:
  enum class Phase { Bracket, Prefill, Decode, Done };
  void enter(Phase phase) {
    phase_ = phase;
    failing_ = 0;  // no count of the role now searched is known to fail
  }

  std::int64_t max_;
  Phase phase_ = Phase::Bracket;
  RoleCounts next_;     // the bracket's next point
  RoleCounts passing_;  // the last point that met the SLO
  std::int64_t failing_ = 0;
  std::optional<RoleCounts> answer_;
};

std::int64_t replicas_for(double tokens_per_s, double tokens_per_s_per_replica) {
  if (!(tokens_per_s > 0)) return 1;
  if (!(tokens_per_s_per_replica > 0)) {
    throw InvariantError("rate matching: a role without throughput");
  }
  // Not rounded up across a float's error: 1.0000000001 replicas is one.
  const double replicas = tokens_per_s / tokens_per_s_per_replica;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(replicas * (1 - 1e-9))));
}

}  // namespace

RoleCounts rate_matched_counts(double rate_per_s, double prompt_tokens, double output_tokens,
                               double prefill_tokens_per_s, double decode_tokens_per_s) {
  return {replicas_for(rate_per_s * prompt_tokens, prefill_tokens_per_s),
          replicas_for(rate_per_s * output_tokens, decode_tokens_per_s)};
}

const LayoutPoint* LayoutSearchResult::answer_point() const {
  for (const auto& point : points) {
    if (answer && point.counts == *answer) return &point;
  }
  return nullptr;
}

std::vector<LayoutSearchResult> search_fewest_layouts(const SloTarget& target,
                                                      const std::vector<RoleCounts>& starts,
                                                      std::int64_t max_replicas,
                                                      const LayoutEvaluator& evaluate) {
  if (target.empty()) throw UsageError("capacity: give at least one --slo");
  if (max_replicas < 1) throw UsageError("capacity: --max-replicas must be >= 1");
  std::vector<LayoutCountSearch> searches;
  for (const RoleCounts& start : starts) {
    if (start.prefill < 1 || start.decode < 1) {
      throw InvariantError("layout search: a start without a replica of each role");
    }
    searches.emplace_back(start, max_replicas);
  }
  std::vector<LayoutSearchResult> results(starts.size());
  while (true) {
    std::vector<LayoutTrial> trials;
    for (std::size_t l = 0; l < searches.size(); ++l) {
      if (const auto counts = searches[l].next()) trials.push_back({l, *counts});
    }
    if (trials.empty()) break;
    const auto summaries = evaluate(trials);
    if (summaries.size() != trials.size()) {
      throw InvariantError("layout search: results do not match the trials");
    }
    for (std::size_t i = 0; i < trials.size(); ++i) {
      LayoutPoint point{trials[i].counts, summaries[i], judge(target, summaries[i])};
      searches[trials[i].layout].record(point.counts, point.verdict);
      results[trials[i].layout].points.push_back(std::move(point));
    }
  }
  for (std::size_t l = 0; l < searches.size(); ++l)
    results[l].answer = searches[l].answer();
  return results;
}

}  // namespace servesim
