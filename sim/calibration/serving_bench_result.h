#pragma once

#include <filesystem>
#include <vector>

#include "sim/calibration/serving_fields.h"
#include "sim/calibration/serving_point.h"

namespace servesim {

// Reads a `vllm bench serve --save-result` JSON file as one point: its requests replayed with
// its arrival process (per-request lengths with --save-detailed, else the mean lengths), its
// mean TTFT, ITL, E2E and output throughput measured; the model from model_id, the rest of
// the deployment from the setup (`setup`, may be null) or the command line.
std::vector<ServingPoint> read_bench_result(const std::filesystem::path& file,
                                            const ServingPointOptions& options,
                                            const serving_fields::Setup* setup);

}  // namespace servesim
