#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli/command.h"
#include "sim/config/catalog.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::error_code ec;
  auto executable = std::filesystem::canonical("/proc/self/exe", ec);
  if (ec) executable = argv[0];
  const auto data_root = servesim::locate_data_root(std::getenv("SERVESIM_DATA_DIR"), executable);
  return servesim::cli::run_cli(args, std::cout, std::cerr, data_root);
}
