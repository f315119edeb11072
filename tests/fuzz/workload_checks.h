#pragma once

#include <cstdint>
#include <string>

#include "sim/workload/workload_spec.h"

namespace servesim::fuzz {

// What every fuzz target that reaches a workload spec holds of it: the spec reads back equal
// from its JSON form, and when it needs no file (no trace, no joint empirical lengths) the
// source it makes with `seed` draws up to 8 requests in time order, each with at least one
// prompt and one output token. std::logic_error otherwise.
void check_workload_spec(const WorkloadSpec& spec, const std::string& source, std::uint64_t seed);

}  // namespace servesim::fuzz
