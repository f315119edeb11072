#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/study/slo.h"

namespace servesim {

// Lower bounds on what a deployment can reach whatever the load, from the configured
// workload's first `requests` requests served one at a time on one replica (constant
// arrivals far enough apart that none overlaps the next): TTFT alone (the prefill of its
// prompt, the longest prompt's for a maximum), TPOT and ITL at batch 1, E2E alone. Latency
// only grows with load and replicas do not shorten one request, so a statistic above its
// limit here is above it at every rate and replica count. Returns the isolated run's summary
// (simulate_summary's, {"does_not_fit": ...} included).
nlohmann::json isolated_summary(nlohmann::json config, std::int64_t requests,
                                const std::filesystem::path& data_root,
                                const std::filesystem::path& working_dir,
                                const std::string& point_name);

// Why `target` cannot be met, from an isolated run's summary ("unreachable: TPOT p99 at
// batch 1 is 68 ms > 50 ms; ..."), or nothing when every term is within reach (or the
// summary is not one of a run that fits, or its requests overlapped after all).
std::optional<std::string> unreachable(const SloTarget& target, const nlohmann::json& isolated);

}  // namespace servesim
