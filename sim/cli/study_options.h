#pragma once

#include <memory>

#include "sim/app/app.h"
#include "sim/cli/options.h"
#include "sim/study/point_executor.h"

namespace servesim::cli {

// -j/--jobs, shared by the commands that run many simulations.
void add_jobs_option(po::options_description& options);
// The executor those options ask for: threads, and the ranks of an MPI job.
std::unique_ptr<IPointExecutor> executor_from(const po::variables_map& vm,
                                              const CommandContext& context);

}  // namespace servesim::cli
