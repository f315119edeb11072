#pragma once

#include <cstddef>
#include <vector>

namespace servesim {

// One point of a throughput/interactivity chart: both axes better when higher (InferenceX's
// output tokens/s per GPU against output tokens/s per user).
struct FrontCandidate {
  double per_gpu = 0;
  double per_user = 0;
};

// The indices of the candidates no other candidate matches or beats on both axes while beating
// it on one (the Pareto front), by per_gpu descending; of equal candidates the first.
std::vector<std::size_t> pareto_front(const std::vector<FrontCandidate>& candidates);

}  // namespace servesim
