#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// The points of a study (compare's policies, sweep's grid points) that ran the same schedule:
// groups of two or more indices, in order, whose summaries agree to the last bit on every
// TTFT, TPOT, ITL and E2E statistic, the duration, the requests completed and rejected and
// the preemptions. Such points differ at most in memory (an allocator's fragmentation, a
// placement), never in what a client saw. A summary that does not fit joins no group.
std::vector<std::vector<std::size_t>> same_schedule_groups(
    const std::vector<const nlohmann::json*>& summaries);

// "Same schedule: A and B; C, D and E (identical latencies, throughput and preemptions)\n",
// naming each point by `names`; "" without a group.
std::string same_schedule_note(const std::vector<std::vector<std::size_t>>& groups,
                               const std::vector<std::string>& names);

}  // namespace servesim
