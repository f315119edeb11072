#include "sim/cli/study_options.h"

#include "sim/app/app.h"
#include "sim/core/error.h"

#include <filesystem>

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

void add_resume_option(po::options_description& options) {
  options.add_options()("resume", po::value<std::string>()->value_name("DIR"),
                        "continue the interrupted study whose --out was DIR (same command and "
                        "arguments), skipping the points it finished");
}

std::optional<std::string> study_out_dir(const po::variables_map& vm) {
  const bool out = vm.count("out") != 0, resume = vm.count("resume") != 0;
  if (out && resume &&
      std::filesystem::path(vm["out"].as<std::string>()).lexically_normal() !=
          std::filesystem::path(vm["resume"].as<std::string>()).lexically_normal()) {
    throw UsageError(
        "--resume continues the study in its own folder: give --out the same "
        "folder or leave it out");
  }
  if (resume) return vm["resume"].as<std::string>();
  if (out) return vm["out"].as<std::string>();
  return std::nullopt;
}

namespace {

// The arguments that make a study what it is: all but where it writes, how many threads
// run it and how it prints.
nlohmann::json study_arguments(const std::vector<std::string>& args) {
  nlohmann::json kept = nlohmann::json::array();
  const auto with_value = [](const std::string& a) {
    return a == "--out" || a == "--resume" || a == "--jobs" || a == "-j";
  };
  const auto attached = [](const std::string& a) {
    return a.rfind("--out=", 0) == 0 || a.rfind("--resume=", 0) == 0 ||
           a.rfind("--jobs=", 0) == 0 || (a.rfind("-j", 0) == 0 && a.size() > 2);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (with_value(a)) {
      ++i;
      continue;
    }
    if (attached(a) || a == "--json" || a == "--no-plots") continue;
    kept.push_back(a);
  }
  return kept;
}

}  // namespace

std::optional<PointJournal> study_journal(const po::variables_map& vm,
                                          const CommandContext& context, std::string_view command) {
  const auto dir = study_out_dir(vm);
  if (!dir) return std::nullopt;
  const nlohmann::json identity{{"command", command}, {"arguments", study_arguments(context.args)}};
  const bool writes = context.processes.leader();
  if (vm.count("resume") != 0) {
    PointJournal journal = PointJournal::resume(*dir, identity, writes);
    if (writes) {
      context.err << "servesim: resuming " << *dir << ": " << journal.size()
                  << " points already finished\n";
    }
    return journal;
  }
  return PointJournal::start(*dir, identity, writes);
}

}  // namespace servesim::cli
