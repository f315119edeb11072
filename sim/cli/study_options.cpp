#include "sim/cli/study_options.h"

#include "sim/app/policy_list.h"
#include "sim/cli/run_options.h"
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

std::vector<ConfigOverride> axis_overrides(const std::string& name, const nlohmann::json& value) {
  const std::string origin = "--grid " + name;
  if (name == "policy") {
    if (!value.is_string()) {
      throw UsageError(origin + ": expected SCHEDULER:ALLOCATOR[:PARAM[:PLACEMENT]], got " +
                       value.dump());
    }
    auto policies = parse_policy_list(value.get<std::string>(), origin);
    if (policies.size() != 1) throw UsageError(origin + ": one policy per value");
    return policies.front().overrides;
  }
  if (name.find('.') == std::string::npos) {
    if (const auto flag_key = config_key_for_flag(name)) {
      return {ConfigOverride{origin, *flag_key + "=" + config_value_for_flag(name, value).dump()}};
    }
  }
  return {ConfigOverride{origin, name + "=" + value.dump()}};
}

}  // namespace servesim::cli
