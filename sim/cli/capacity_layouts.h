#pragma once

#include <array>
#include <ostream>
#include <vector>

#include "sim/cli/capacity_study.h"
#include "sim/cli/format.h"
#include "sim/study/layout_study.h"

namespace servesim::cli {

// The console report of `capacity --disaggregated` (sim/study/layout_study.h's search): every
// point, the deployments, the best of each kind and the Pareto front.
struct LayoutReport {
  double rate_per_s = 0;
  bool by_cost = false;  // --minimize cost
  const std::vector<LayoutDeployment>& deployments;
  const std::vector<SearchedPoint>& points;
  std::array<const LayoutDeployment*, 2> best;  // aggregated, disaggregated; null: none
  std::array<bool, 2> searched_any;             // whether any of each kind was searched
  const LayoutFront& front;
  bool wrote_configs = false;
};
void print_layouts_report(std::ostream& out, const LayoutReport& report);

}  // namespace servesim::cli
