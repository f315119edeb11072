#include "tests/fuzz/workload_checks.h"

#include <stdexcept>

#include "sim/core/rng.h"

namespace servesim::fuzz {

void check_workload_spec(const WorkloadSpec& spec, const std::string& source, std::uint64_t seed) {
  if (!(parse_workload_spec(workload_spec_to_json(spec), source, "fuzz-base-dir") == spec)) {
    throw std::logic_error("workload spec does not read back equal from its JSON form");
  }
  if (spec.uses_trace() || spec.lengths.distribution == LengthsKind::JointEmpirical) return;
  const auto workload = make_workload_source(spec, RngStreams(seed));
  SimTime previous;
  for (int i = 0; i < 8 && !workload->exhausted(); ++i) {
    const auto request = workload->next();
    if (!request) break;
    if (request->arrival < previous || request->prompt_tokens < 1 || request->output_tokens < 1) {
      throw std::logic_error("workload emitted an unsorted or empty request");
    }
    previous = request->arrival;
  }
}

}  // namespace servesim::fuzz
