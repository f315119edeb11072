#include <stdexcept>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/core/rng.h"
#include "sim/workload/workload_spec.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

// A workloads/<name>.json file as --workload PATH reads it: parsed into a spec that reads back
// equal from its JSON form; a workload that needs no file then draws a few requests, which
// must come in time order with at least one prompt and one output token each.
bool load_workload_text(std::string_view text) {
  const std::string source = "fuzz-workload.json";
  try {
    const WorkloadSpec spec =
        parse_workload_spec(parse_json_text(text, source), source, "fuzz-base-dir");
    if (!(parse_workload_spec(workload_spec_to_json(spec), source, "fuzz-base-dir") == spec)) {
      throw std::logic_error("workload spec does not read back equal from its JSON form");
    }
    if (spec.uses_trace() || spec.lengths.distribution == LengthsKind::JointEmpirical) return true;
    const auto workload = make_workload_source(spec, RngStreams(7));
    SimTime previous;
    for (int i = 0; i < 8 && !workload->exhausted(); ++i) {
      const auto request = workload->next();
      if (!request) break;
      if (request->arrival < previous || request->prompt_tokens < 1 || request->output_tokens < 1) {
        throw std::logic_error("workload emitted an unsorted or empty request");
      }
      previous = request->arrival;
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_workload_text)
