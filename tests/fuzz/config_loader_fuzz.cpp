#include <stdexcept>

#include "sim/app/policies.h"
#include "sim/config/overrides.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/workload/workload_spec.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/workload_checks.h"

namespace servesim::fuzz {

// The path of a --config file: parsed strictly, merged over the defaults, typed into a
// RunConfig, its workload parsed into a spec; then a synthetic workload draws a few requests,
// so fuzzed distribution parameters reach the samplers too.
bool load_config_text(std::string_view text) {
  const std::string source = "fuzz-config.json";
  try {
    nlohmann::json document = run_config_to_json(RunConfig{});
    document["workload"] = {{"arrival", {{"process", "poisson"}, {"rate_per_s", 8.0}}},
                            {"lengths",
                             {{"distribution", "independent"},
                              {"prompt", {{"distribution", "fixed"}, {"tokens", 16}}},
                              {"output", {{"distribution", "fixed"}, {"tokens", 16}}}}},
                            {"num_requests", 4}};
    const nlohmann::json file = parse_json_text(text, source);
    // A workload in the file replaces the default one whole, as a preset would.
    if (file.is_object() && file.contains("workload")) document.erase("workload");
    deep_merge(document, file);
    const RunConfig config = run_config_from_json(document, source, policy_menus());
    const WorkloadSpec spec = parse_workload_spec(config.workload, source, "fuzz-base-dir");
    check_workload_spec(spec, source, config.seed);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_config_text)
