#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <sstream>

#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;

namespace {

using Args = std::vector<std::string>;

// The rows of README.md's "Errors and exit codes" table: code -> meaning.
std::map<int, std::string> readme_exit_codes() {
  std::istringstream readme(test::read_file(test::source_dir() / "README.md"));
  std::map<int, std::string> rows;
  bool in_section = false;
  const std::regex row(R"(^\| (\d+) \| (.+) \|$)");
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Errors and exit codes";
    std::smatch m;
    if (in_section && std::regex_match(line, m, row)) rows[std::stoi(m[1])] = m[2];
  }
  return rows;
}

}  // namespace

TEST_CASE("README's exit-code table and the tool agree, one example per row", "[cli][exit_codes]") {
  // Examples of each documented code, as the table's meaning describes them.
  const std::map<int, std::vector<Args>> examples = {
      {0, {{"run", "--num-requests", "5"}}},
      {2,
       {{"frobnicate"},                // unknown command
        {"run", "--no-such-flag"},     // unknown option
        {"run", "--rate"},             // missing value
        {"run", "--rate", "abc"},      // non-numeric value (a rate)
        {"run", "--tp", "abc"},        // non-numeric value (an integer)
        {"run", "--mem-util", "x"}}},  // non-numeric value (a number)
      {3,
       {{"run", "--config", "no-such-file.json"},                     // unreadable file
        {"run", "--set", "workload.arival.rate_per_s=2"},             // unknown key
        {"run", "--model", "no-such-model"},                          // unknown name
        {"run", "--kv-dtype", "fp7"},                                 // unknown dtype
        {"run", "--rate", "-4"},                                      // a number out of range
        {"run", "--tp", "3"}}},                                       // impossible dimension
      {4, {{"run", "--model", "llama-2-70b", "--hw", "a100-40gb"}}},  // does not fit the GPU
  };
  const auto rows = readme_exit_codes();
  REQUIRE(rows.size() == 5);
  for (const auto& [code, meaning] : rows) {
    INFO("exit code " << code << ": " << meaning);
    if (code == 5) {
      // A failed invariant is a bug, with no input that reaches it: the code it maps to.
      CHECK(exit_code_for(ErrorKind::Internal) == 5);
      continue;
    }
    REQUIRE(examples.count(code) == 1);
    for (const Args& args : examples.at(code)) {
      const auto r = test::run_servesim(args);
      INFO(Catch::Detail::stringify(args) << " -> " << r.exit_code << ": " << r.err);
      CHECK(r.exit_code == code);
      if (code != 0) CHECK(r.err.rfind("servesim: error: ", 0) == 0);
    }
  }
  // `servesim --help` states the same codes.
  const auto help = test::run_servesim({"--help"});
  CHECK_THAT(help.out, Catch::Matchers::Contains("0 success, 2 usage error, 3 invalid input, 4 "
                                                 "infeasible configuration,\n5 internal "
                                                 "invariant failure."));
}
