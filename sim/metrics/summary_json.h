#pragma once

#include <nlohmann/json.hpp>

#include "sim/metrics/run_summary.h"

namespace servesim {

// The summary.json document; docs/metrics.md lists its keys. `slo_attainment` is present
// only when the summary has one. Throws InvariantError on a non-finite value, which JSON
// cannot represent and which would mean a bug upstream.
nlohmann::json summary_to_json(const RunSummary& summary);

// The steady-state window and its throughputs, as studies report them (docs/studies.md).
nlohmann::json steady_state_to_json(const SteadyStateThroughput& steady_state);

}  // namespace servesim
