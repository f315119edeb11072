#include <fstream>

#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/study/grid.h"
#include "tests/support/test_support.h"

namespace {

std::vector<servesim::ConfigOverride> key_override(const std::string& name,
                                                   const nlohmann::json& value) {
  return {{"--grid " + name, name + "=" + value.dump()}};
}

}  // namespace

TEST_CASE("A grid flag splits values at top-level commas and reads them as JSON", "[study]") {
  const auto axis = servesim::parse_grid_flag(
      R"(workload.lengths={"distribution": "fixed", "tokens": 4},2.5,vllm,[1,2])");
  REQUIRE(axis.name == "workload.lengths");
  REQUIRE(axis.values.size() == 4);
  CHECK(axis.values[0]["tokens"] == 4);
  CHECK(axis.values[1] == 2.5);
  CHECK(axis.values[2] == "vllm");
  CHECK(axis.values[3] == nlohmann::json::array({1, 2}));
}

TEST_CASE("Grid flags without a key or with empty values are usage errors", "[study]") {
  CHECK_THROWS_AS(servesim::parse_grid_flag("rate"), servesim::UsageError);
  CHECK_THROWS_AS(servesim::parse_grid_flag("=1,2"), servesim::UsageError);
  CHECK_THROWS_AS(servesim::parse_grid_flag("rate="), servesim::UsageError);
  CHECK_THROWS_WITH(servesim::parse_grid_flag("rate=1,,2"), Catch::Contains("empty value"));
}

TEST_CASE("A grid expands to every combination, the last axis fastest", "[study]") {
  const std::vector<servesim::GridAxis> axes{{"a", {1, 2}}, {"b", {"x", "y", "z"}}};
  const auto points = servesim::expand_grid(axes, key_override);
  REQUIRE(points.size() == 6);
  CHECK(points[0].labels == std::vector<std::string>{"1", "x"});
  CHECK(points[1].labels == std::vector<std::string>{"1", "y"});
  CHECK(points[3].labels == std::vector<std::string>{"2", "x"});
  CHECK(points[5].overrides.back().assignment == "b=\"z\"");
  CHECK(points[5].values.front() == 2);
}

TEST_CASE("An empty grid or an axis given twice is refused", "[study]") {
  CHECK_THROWS_WITH(servesim::expand_grid({}, key_override), Catch::Contains("grid is empty"));
  CHECK_THROWS_WITH(servesim::expand_grid({{"a", {1}}, {"a", {2}}}, key_override),
                    Catch::Contains("given twice"));
}

TEST_CASE("Grid files keep their axis order and are checked strictly", "[study]") {
  servesim::test::ScratchDir dir("grid_file");
  const auto write = [&](const std::string& text) {
    std::ofstream(dir.path() / "grid.json") << text;
    return dir.path() / "grid.json";
  };
  const auto axes = servesim::load_grid_file(
      write(R"({"grid": [{"key": "z", "values": [1]}, {"key": "a", "values": ["p", "q"]}]})"));
  REQUIRE(axes.size() == 2);
  CHECK(axes[0].name == "z");
  CHECK(axes[1].values.size() == 2);
  CHECK_THROWS_WITH(servesim::load_grid_file(write(R"({"grid": []})")),
                    Catch::Contains("grid.json") && Catch::Contains("non-empty"));
  CHECK_THROWS_WITH(servesim::load_grid_file(write(R"({"grid": [{"key": "a", "values": []}]})")),
                    Catch::Contains("grid[0].values"));
  CHECK_THROWS_WITH(
      servesim::load_grid_file(write(R"({"grid": [{"key": "a", "values": [1], "x": 2}]})")),
      Catch::Contains("x"));
}
