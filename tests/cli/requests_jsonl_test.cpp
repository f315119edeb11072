// requests.jsonl: written only with run --requests-jsonl, and then requests.csv's rows as
// JSON objects.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

using Args = std::vector<std::string>;

test::CliResult run(const Args& args) {
  return test::run_servesim(args);
}

// requests.csv as rows of cells, split at commas (no cell here holds one).
std::vector<std::vector<std::string>> csv_rows(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    auto& row = rows.emplace_back();
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');)
      row.push_back(cell);
    if (!line.empty() && line.back() == ',') row.emplace_back();
  }
  return rows;
}

}  // namespace

TEST_CASE("requests.jsonl holds requests.csv's rows as JSON objects", "[cli][vllm]") {
  test::ScratchDir dir("vllm_requests_jsonl");
  const auto out = dir.path() / "out";
  // Written only when asked for: it repeats requests.csv.
  const Args args = {"run",    "--num-requests", "80",   "--max-len", "600", "--max-len-policy",
                     "reject", "--no-plots",     "--out"};
  const auto plain = dir.path() / "plain";
  Args without = args;
  without.push_back(plain.string());
  const auto p = run(without);
  REQUIRE(p.exit_code == 0);
  CHECK(std::filesystem::exists(plain / "requests.csv"));
  CHECK_FALSE(std::filesystem::exists(plain / "requests.jsonl"));
  CHECK_THAT(p.out, !Contains("requests.jsonl"));
  test::require_error(run({"run", "--num-requests", "5", "--requests-jsonl"}), 2,
                      "--requests-jsonl: only with --out");
  // Some requests rejected (prompt + output over max-len), some of a single token.
  Args with = args;
  with.push_back(out.string());
  with.push_back("--requests-jsonl");
  const auto r = run(with);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("requests.csv, requests.jsonl, "));
  const auto rows = csv_rows(out / "requests.csv");
  std::ifstream in(out / "requests.jsonl");
  std::vector<nlohmann::json> objects;
  for (std::string line; std::getline(in, line);)
    objects.push_back(nlohmann::json::parse(line));
  REQUIRE(objects.size() + 1 == rows.size());
  const auto& header = rows.front();
  bool rejected_seen = false;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const auto& row = rows[i + 1];
    REQUIRE(row.size() == header.size());
    REQUIRE(objects[i].size() == header.size());
    for (std::size_t c = 0; c < header.size(); ++c) {
      INFO(header[c] << " of row " << i);
      const auto& value = objects[i].at(header[c]);
      if (row[c].empty()) {
        CHECK(value.is_null());
      } else if (header[c] == "reject_reason") {
        CHECK(value == row[c]);
        rejected_seen = true;
      } else {
        CHECK(value.dump() == nlohmann::json::parse(row[c]).dump());
      }
    }
  }
  CHECK(rejected_seen);
}
