#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/config_assembly.h"
#include "sim/cli/options.h"
#include "sim/study/point_executor.h"

namespace servesim::cli {

// -j/--jobs, shared by the commands that run many simulations.
void add_jobs_option(po::options_description& options);
// The executor those options ask for: threads, and the ranks of an MPI job.
std::unique_ptr<IPointExecutor> executor_from(const po::variables_map& vm,
                                              const CommandContext& context);

// The overrides that set a study axis: a dotted configuration key as is, a run flag's name
// ("rate", "hw", "tp", "scheduler", "block-size", ...) as the key that flag sets, or
// "policy" as a SCHEDULER:ALLOCATOR[:PARAM[:PLACEMENT]] combination of `servesim compare`.
std::vector<ConfigOverride> axis_overrides(const std::string& name, const nlohmann::json& value);

}  // namespace servesim::cli
