#include <catch2/catch.hpp>

#include <sstream>

#include "tests/support/test_support.h"

using namespace servesim;

TEST_CASE("servesim list fits 100 columns, wrapping its descriptions", "[cli][list]") {
  const auto r = test::run_servesim({"list"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::size_t widest = 0;
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    INFO(line);
    CHECK(line.size() <= 100);
    widest = std::max(widest, line.size());
  }
  CHECK(count > 50);
  CHECK(widest > 80);  // the tables use the width they have
  // A wrapped description keeps every word: the prefix-aware router's ends in its defaults.
  CHECK_THAT(r.out, Catch::Matchers::Contains("prefix_aware"));
  CHECK_THAT(r.out, Catch::Matchers::Contains("default)"));
}

TEST_CASE("run --help names every router", "[cli][list]") {
  const auto help = test::run_servesim({"run", "--help"});
  for (const char* router :
       {"round_robin", "least_outstanding", "least_kv", "prefix_aware", "random"}) {
    INFO(router);
    CHECK_THAT(help.out, Catch::Matchers::Contains(router));
  }
}
