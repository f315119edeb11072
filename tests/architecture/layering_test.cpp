// The modules include only modules below them, as docs/architecture.md orders them.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/architecture/layering_check.h"
#include "tests/support/test_support.h"

namespace {

using servesim::test::layering_violations;
using servesim::test::parse_layering;
using servesim::test::scan_module_includes;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A tree of sources to scan: each file's path under the root and its text.
std::filesystem::path make_tree(const std::string& name,
                                const std::vector<std::pair<std::string, std::string>>& files) {
  const auto root = std::filesystem::temp_directory_path() / ("servesim-layering-" + name);
  std::filesystem::remove_all(root);
  for (const auto& [path, text] : files) {
    std::filesystem::create_directories((root / path).parent_path());
    std::ofstream(root / path) << text;
  }
  return root;
}

const char kLayers[] =
    "```layers\n"
    "core: the bottom\n"
    "model: a | engine: b\n"
    "app: assembly\n"
    "cli: argv | python: module\n"
    "```\n"
    "```layer-entries\n"
    "app: sim/app/app.h\n"
    "```\n";

}  // namespace

TEST_CASE("every include of the tree follows docs/architecture.md's layers, with no cycle",
          "[architecture]") {
  const auto layering =
      parse_layering(read_text(servesim::test::source_dir() / "docs/architecture.md"));
  REQUIRE(layering.level.at("core") == 0);
  REQUIRE(layering.level.at("app") > layering.level.at("cluster"));
  REQUIRE(layering.level.at("python") == layering.level.at("cli"));
  const auto includes = scan_module_includes(servesim::test::source_dir());
  // The scan sees the tree: hundreds of cross-module includes, python's and bench's among them.
  REQUIRE(includes.size() > 300);
  const auto from = [&](const std::string& module) {
    return std::count_if(includes.begin(), includes.end(),
                         [&](const auto& inc) { return inc.from == module; });
  };
  REQUIRE(from("python") > 0);
  REQUIRE(from("bench") > 0);
  REQUIRE(from("validation") > 0);
  const auto violations = layering_violations(layering, includes);
  std::string report;
  for (const auto& v : violations)
    report += v + "\n";
  INFO(report);
  CHECK(violations.empty());
}

TEST_CASE("the layering check fails on an upward include, naming file and line", "[architecture]") {
  const auto root =
      make_tree("upward", {{"sim/core/clock.h", "#pragma once\n\n#include \"sim/app/app.h\"\n"},
                           {"sim/app/app.h", "#pragma once\n#include \"sim/core/clock.h\"\n"}});
  const auto violations = layering_violations(parse_layering(kLayers), scan_module_includes(root));
  REQUIRE(violations.size() == 2);
  CHECK(violations[0] == "sim/core/clock.h:3: includes sim/app/app.h: core may include only none");
  CHECK(violations[1] == "cycle: app -> core -> app");
  std::filesystem::remove_all(root);
}

TEST_CASE("the layering check refuses siblings, unknown modules and a bypassed entry header",
          "[architecture]") {
  const auto root =
      make_tree("siblings", {{"sim/model/spec.cpp", "#include \"sim/engine/profile.h\"\n"},
                             {"sim/cli/run.cpp",
                              "// a comment\n#include \"sim/app/simulation.h\"\n"
                              "#include \"sim/app/app.h\"\n"},
                             {"python/module.cpp", "#include \"sim/cli/options.h\"\n"},
                             {"sim/extra/thing.cpp", "#include \"sim/core/clock.h\"\n"}});
  const auto violations = layering_violations(parse_layering(kLayers), scan_module_includes(root));
  REQUIRE(violations.size() == 4);
  CHECK(violations[0] ==
        "python/module.cpp:1: includes sim/cli/options.h: python may include only app, core, "
        "engine, model");
  CHECK(violations[1] ==
        "sim/cli/run.cpp:2: includes sim/app/simulation.h: above app, reach it "
        "only through sim/app/app.h");
  CHECK(violations[2] ==
        "sim/extra/thing.cpp:1: module extra is not in docs/architecture.md's layers");
  CHECK(violations[3] ==
        "sim/model/spec.cpp:1: includes sim/engine/profile.h: model may include only core");
  std::filesystem::remove_all(root);
}

TEST_CASE("the layers block is read strictly", "[architecture]") {
  CHECK_THROWS_WITH(parse_layering("no blocks here"), Catch::Contains("no ```layers block"));
  CHECK_THROWS_WITH(parse_layering("```layers\ncore: a\ncore: b\n```\n```layer-entries\n```\n"),
                    Catch::Contains("module core appears twice"));
}
