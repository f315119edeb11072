#pragma once

#include <vector>

#include "validation/harness_options.h"
#include "validation/harness_plan.h"
#include "validation/harness_record.h"
#include "validation/measurement.h"

namespace servesim::validation {

// The device half of each subcommand: verify, then time, on CUDA device 0. Each throws
// HarnessFailure on a CUDA error or a failed verification.
std::vector<Measurement> measure_bandwidth(const HarnessOptions& options);
std::vector<Measurement> measure_gemms(const HarnessOptions& options, const GemmPlan& plan);
std::vector<Measurement> measure_attention(const HarnessOptions& options,
                                           const AttentionPlan& plan);
std::vector<Measurement> replay_iterations(const HarnessOptions& options, const ReplayPlan& plan);
// The records of these two carry fields the simulator's Measurement does not hold (the kernel,
// the routing): harness_record.h.
std::vector<HarnessRecord> measure_quant_gemms(const HarnessOptions& options,
                                               const QuantGemmPlan& plan);
std::vector<HarnessRecord> measure_moe_gemms(const HarnessOptions& options,
                                             const MoeGemmPlan& plan);

// Timed calls are preceded by this many untimed ones (clocks up, caches and cuBLAS
// heuristics warm).
constexpr int kWarmupCalls = 3;

}  // namespace servesim::validation
