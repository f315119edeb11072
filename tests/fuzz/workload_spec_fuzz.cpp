#include <stdexcept>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/workload/workload_spec.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/workload_checks.h"

namespace servesim::fuzz {

// A workloads/<name>.json file as --workload PATH reads it: parsed into a spec that reads back
// equal from its JSON form; a workload that needs no file then draws a few requests, which
// must come in time order with at least one prompt and one output token each.
bool load_workload_text(std::string_view text) {
  const std::string source = "fuzz-workload.json";
  try {
    const WorkloadSpec spec =
        parse_workload_spec(parse_json_text(text, source), source, "fuzz-base-dir");
    check_workload_spec(spec, source, 7);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_workload_text)
