#include <stdexcept>
#include <variant>

#include "sim/calibration/serving_point.h"
#include "sim/core/error.h"
#include "tests/fuzz/fuzz_scratch.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

// A `vllm bench serve --save-result` JSON file as `servesim validate --measured` and
// `calibrate --measured` read it, with --hw h100-sxm (a result does not record its GPU). An
// accepted result is one point replaying at least one request of at least one prompt and one
// output token, at a positive rate, with a completed share in [0, 1].
bool load_bench_result_text(std::string_view text) {
  try {
    ServingPointOptions options;
    options.data_root = stub_data_root();
    options.hardware = "h100-sxm";
    const auto points = read_serving_points(write_scratch_file("bench.json", text), options);
    if (points.size() != 1) throw std::logic_error("bench result accepted as several points");
    const ServingPoint& p = points[0];
    const auto* replay = std::get_if<BenchReplay>(&p.workload);
    const auto share = p.measured[ServingMetric::CompletedShare];
    if (replay == nullptr || replay->requests.empty() || !(replay->request_rate_per_s > 0) ||
        !share || !(*share >= 0 && *share <= 1) || p.model.empty() || p.hardware != "h100-sxm") {
      throw std::logic_error("bench result accepted with no replay, rate or completed share");
    }
    for (const auto& r : replay->requests) {
      if (r.prompt_tokens < 1 || r.output_tokens < 1) {
        throw std::logic_error("bench result accepted with an empty request");
      }
    }
    (void)p.workload_label();
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_bench_result_text)
