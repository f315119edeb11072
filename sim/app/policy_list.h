#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/app/config_assembly.h"

namespace servesim {

// One policy combination of `servesim compare`, as configuration overrides.
struct PolicyCombination {
  std::string label;  // the spec as given: "orca:contiguous:pow2"
  std::vector<ConfigOverride> overrides;
};

// Parses "SCHEDULER:ALLOCATOR[:PARAM[:PLACEMENT]],..." where PARAM is the block size for
// `paged` and the reservation policy (max, pow2, oracle, fixed-N) for `contiguous`, whose
// optional PLACEMENT is buddy or first_fit; paged's fourth field, `prefix` or `no_prefix`,
// turns prefix caching on or off (engine.enable_prefix_caching; else the engine's default). Names
// are checked later, with the run config. `origin` names the flag in errors and overrides.
std::vector<PolicyCombination> parse_policy_list(std::string_view list,
                                                 const std::string& origin = "--policies");

}  // namespace servesim
