#include "sim/study/pareto_front.h"

#include <algorithm>
#include <numeric>

namespace servesim {

std::vector<std::size_t> pareto_front(const std::vector<FrontCandidate>& candidates) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Best per GPU first, then best per user; the first of equals first.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const FrontCandidate& x = candidates[a];
    const FrontCandidate& y = candidates[b];
    if (x.per_gpu != y.per_gpu) return x.per_gpu > y.per_gpu;
    return x.per_user > y.per_user;
  });
  // Walking down per GPU, a candidate is on the front when it beats every one before it per
  // user (those match or beat it per GPU).
  std::vector<std::size_t> front;
  for (const std::size_t i : order) {
    if (front.empty() || candidates[i].per_user > candidates[front.back()].per_user) {
      front.push_back(i);
    }
  }
  return front;
}

}  // namespace servesim
