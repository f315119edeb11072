#include <array>
#include <exception>

#include <boost/program_options/errors.hpp>

#include "sim/cli/command.h"
#include "sim/cli/options.h"
#include "sim/core/error.h"
#include "sim/core/version.h"

namespace servesim::cli {
namespace {

constexpr std::array<Command, 11> kCommands{{
    {"run", "Simulate serving a workload: TTFT, TPOT, ITL, E2E, throughput", &run_run},
    {"compare", "Run the same requests through several scheduler/allocator combinations",
     &run_compare},
    {"sweep", "Run a grid of configurations: one CSV row per point, latency/throughput curves",
     &run_sweep},
    {"capacity", "Highest rate, or fewest replicas, that meets latency SLOs", &run_capacity},
    {"plot", "Render the plots of an existing output folder with gnuplot", &run_plot},
    {"report", "One self-contained HTML page of a run, sweep, compare or capacity folder",
     &run_report},
    {"calibrate", "Fit a hardware profile to measured operator times", &run_calibrate},
    {"validate", "Compare a profile's predictions with measured operator times", &run_validate},
    {"kv", "KV-cache calculator: bytes per token, capacity and sequences that fit", &run_kv},
    {"roofline", "Where one iteration's time goes: per-operator roofline of a batch",
     &run_roofline},
    {"list", "List the shipped models, hardware, workloads and policies", &run_list},
}};

void print_usage(std::ostream& out) {
  out << "servesim: a discrete-event simulator of LLM serving\n\n"
         "Usage: servesim <command> [options]\n"
         "       servesim <command> --help    options of one command, with units and defaults\n\n"
         "Commands:\n";
  for (const auto& command : kCommands) {
    out << "  " << command.name << std::string(12 - command.name.size(), ' ') << command.summary
        << '\n';
  }
  out << "\nExit codes: 0 success, 2 usage error, 3 invalid input, 4 infeasible configuration,\n"
         "5 internal invariant failure.\n";
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const std::filesystem::path& data_root, const ProcessGroup& processes, bool terminal) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(out);
    return args.empty() ? exit_code_for(ErrorKind::Usage) : 0;
  }
  if (args[0] == "--version") {
    out << "servesim " << servesim_version() << '\n';
    return 0;
  }
  const Command* command = nullptr;
  for (const auto& candidate : kCommands) {
    if (candidate.name == args[0]) command = &candidate;
  }
  try {
    if (command == nullptr) {
      std::string names;
      for (const auto& c : kCommands)
        names += (names.empty() ? "" : ", ") + std::string(c.name);
      throw UsageError("unknown command \"" + args[0] + "\" (commands: " + names + ")");
    }
    // Only the studies spread over the ranks of an MPI job; any other command runs once.
    if (processes.size > 1 && !processes.leader() && command->name != "sweep" &&
        command->name != "capacity") {
      return 0;
    }
    CommandContext context{
        {args.begin() + 1, args.end()}, out, err, data_root, processes, terminal, command->name};
    return command->run(context);
  } catch (const Error& error) {
    err << "servesim: error: " << one_line(error.what()) << '\n';
    return exit_code_for(error.kind());
  } catch (const boost::program_options::error& error) {
    err << "servesim: error: " << one_line(error.what()) << " (see servesim " << args[0]
        << " --help)\n";
    return exit_code_for(ErrorKind::Usage);
  } catch (const std::exception& error) {
    err << "servesim: internal error: " << one_line(error.what()) << '\n';
    return exit_code_for(ErrorKind::Internal);
  }
}

}  // namespace servesim::cli
