#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace servesim::test {

// The module layering of docs/architecture.md, as data: each module's level (0 at the
// bottom; modules of one level are siblings) and, for a module that callers above it reach
// through one header, that header.
struct Layering {
  std::map<std::string, int> level;
  std::map<std::string, std::string> entry;  // module -> "sim/app/app.h"
};

// Reads the ```layers and ```layer-entries blocks of the architecture page's text. A line of
// `layers` lists one level's modules, "name: what it owns" separated by " | ". Throws
// std::runtime_error when a block is missing or a module appears twice.
Layering parse_layering(const std::string& markdown);

// One `#include "sim/<module>/..."` of a source file, with the module it was found in.
struct ModuleInclude {
  std::string file;  // relative to the root, "sim/hardware/foo.cpp"
  int line = 0;
  std::string from;    // "hardware", or "python", "validation", "bench"
  std::string to;      // "config"
  std::string header;  // "sim/config/run_config.h"
};

// Every include of a header under sim/ found in the sources (.h, .cpp, .cu, .cuh) of sim/*/,
// python/, validation/ and bench/ under `root`; includes within one module are left out.
std::vector<ModuleInclude> scan_module_includes(const std::filesystem::path& root);

// Each include against the layering, as "file:line: ..." naming what was included and what
// the module may include; then each cycle between modules, as "cycle: a -> b -> a".
std::vector<std::string> layering_violations(const Layering& layering,
                                             const std::vector<ModuleInclude>& includes);

}  // namespace servesim::test
