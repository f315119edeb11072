#include "sim/cli/study_options.h"

#include "sim/app/app.h"
#include "sim/core/error.h"

namespace servesim::cli {

void add_jobs_option(po::options_description& options) {
  options.add_options()("jobs,j", po::value<int>()->value_name("N")->default_value(1),
                        "simulations run at once, on N threads (results do not depend on N); "
                        "under mpirun, per rank");
}

std::unique_ptr<IPointExecutor> executor_from(const po::variables_map& vm,
                                              const CommandContext& context) {
  const int jobs = vm["jobs"].as<int>();
  if (jobs < 1) throw UsageError("--jobs: expected at least 1, got " + std::to_string(jobs));
  return make_point_executor(jobs, context.processes);
}

}  // namespace servesim::cli
