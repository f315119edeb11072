#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "sim/cli/command.h"
#include "sim/config/catalog.h"
#include "sim/study/mpi_session.h"

namespace {

// Swallows everything: ranks other than 0 of an MPI job print nothing.
class NullBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
};

}  // namespace

int main(int argc, char** argv) {
  const servesim::MpiSession mpi(&argc, &argv);
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::error_code ec;
  auto executable = std::filesystem::canonical("/proc/self/exe", ec);
  if (ec) executable = argv[0];
  const auto data_root = servesim::locate_data_root(std::getenv("SERVESIM_DATA_DIR"), executable);
  const auto processes = mpi.group();
  NullBuffer null_buffer;
  std::ostream null_stream(&null_buffer);
  std::ostream& out = processes.leader() ? std::cout : null_stream;
  std::ostream& err = processes.leader() ? std::cerr : null_stream;
  return servesim::cli::run_cli(args, out, err, data_root, processes,
                                processes.leader() && ::isatty(STDERR_FILENO) == 1);
}
