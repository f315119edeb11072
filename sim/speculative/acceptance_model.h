#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/rng.h"

namespace servesim {

// Draws how many of a request's draft tokens the target accepts: drafts are checked in
// order, draft i accepted with probability rates[i] (the last rate for positions past the
// list) when every draft before it was, and the first rejection ends the step. With one
// rate a, a step of k drafts emits (1 - a^(k+1)) / (1 - a) tokens on average, the bonus
// (or correction) token included (Leviathan et al., 2023). The draws come from one named
// random stream, so a run repeats for a seed.
class AcceptanceModel {
 public:
  AcceptanceModel(std::vector<double> rates, Rng rng);

  // Accepted drafts out of `proposed` (0 for none proposed, drawing nothing).
  std::int64_t draw(std::int64_t proposed);
  // Expected tokens a step of `proposed` drafts emits, the bonus token included.
  double expected_tokens_per_step(std::int64_t proposed) const;

 private:
  double rate(std::int64_t position) const {
    const auto last = static_cast<std::int64_t>(rates_.size()) - 1;
    return rates_[static_cast<std::size_t>(position < last ? position : last)];
  }
  std::vector<double> rates_;
  Rng rng_;
};

}  // namespace servesim
