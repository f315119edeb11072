#pragma once

#include <cstdint>
#include <vector>

#include "sim/study/grid.h"
#include "sim/study/sweep_result.h"

namespace servesim {

// Replicates (`sweep --seeds N`): every grid point run with N seeds, first_seed to
// first_seed + N - 1, as a last axis "seed" (varying fastest), then each point's runs folded
// into one row: every number of the summary (to the depth sweep.csv flattens) the mean over the
// seeds, beside it "<key>_ci95" the half-width of its 95% confidence interval (Student's t with
// N - 1 degrees of freedom times the standard error; 0 when the seeds agree). A point that does
// not fit is one row saying why. A point is stable only if every seed is: steady_state's
// `stable` is the share of stable seeds, `stable_seeds` their count, and `unstable` says
// "k of N seeds unstable: REASON" when any is not.

// The most replicates of a point. A 95% confidence interval narrows as 1/sqrt(N): 1,000
// seeds already give it to 3% of one run's spread, more than any study reports.
inline constexpr std::int64_t kMaxSeeds = 1000;

// `axes` with the seed axis appended. UsageError when N < 2 or an axis already sets the seed,
// InputError when N > kMaxSeeds.
std::vector<GridAxis> with_seed_axis(std::vector<GridAxis> axes, std::int64_t first_seed,
                                     std::int64_t seeds);

// The rows of `per_seed` (a sweep over with_seed_axis's axes) folded per point.
SweepResult fold_seed_replicates(const SweepResult& per_seed, std::int64_t seeds);

// The two-sided 95% quantile of Student's t with `degrees` degrees of freedom (>= 1).
double student_t_95(std::int64_t degrees);

}  // namespace servesim
