#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/study/process_group.h"

namespace servesim::cli {

// Everything a subcommand may touch: its arguments, where to print, where shipped data lives.
struct CommandContext {
  std::vector<std::string> args;  // after the subcommand name
  std::ostream& out;
  std::ostream& err;
  std::filesystem::path data_root;  // holds models/, hw_profiles/, workloads/
  ProcessGroup processes{};         // the MPI ranks running this command, or just this process
  bool terminal = false;            // `err` is a terminal: long studies may show progress
  std::string_view name;            // the subcommand: "run", "sweep", ...
};

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(CommandContext& context);
};

int run_kv(CommandContext& context);
int run_roofline(CommandContext& context);
int run_list(CommandContext& context);
int run_run(CommandContext& context);
int run_compare(CommandContext& context);
int run_sweep(CommandContext& context);
int run_capacity(CommandContext& context);
int run_plot(CommandContext& context);
int run_calibrate(CommandContext& context);
int run_validate(CommandContext& context);
int run_report(CommandContext& context);

// Writes DIR/command.json: the servesim version and the command line that wrote the folder
// (`servesim report` shows them; the line reruns the study).
void write_command_record(const std::filesystem::path& dir, const CommandContext& context);

// Runs `servesim <args...>`: dispatches to a subcommand, prints errors as one line on `err`
// and returns the process exit code (see ErrorKind). Never calls exit.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const std::filesystem::path& data_root, const ProcessGroup& processes = {},
            bool terminal = false);

}  // namespace servesim::cli
