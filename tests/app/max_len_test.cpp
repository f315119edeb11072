// Admission at the maximum sequence length, as vLLM does it: a prompt with no room for an
// output token is rejected; a longer output is cut at max_len (max_len_policy "cut", the
// default) or the whole request rejected ("reject"); max_len itself may not pass the model's
// max_position_embeddings. And vLLM V0's token limit, which follows max_len.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A replayed trace with prompts and outputs around a max_len of 1,024 tokens.
constexpr const char* kTrace =
    "arrival_time_s,prompt_tokens,output_tokens\n"
    "0.0,100,50\n"   // fits
    "0.1,900,200\n"  // passes max_len: cut to 124 output tokens
    "0.2,1000,30\n"  // cut to 24
    "0.3,1024,5\n"   // a prompt of max_len leaves no room for an output token
    "0.4,1500,10\n"  // a prompt over max_len
    "0.5,1023,1\n";  // exactly max_len

// requests.csv as one map of column to cell per row.
std::vector<std::map<std::string, std::string>> read_rows(const std::filesystem::path& path) {
  std::istringstream lines(test::read_file(path));
  const auto cells = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');)
      out.push_back(cell);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
  };
  std::string line;
  std::getline(lines, line);
  const auto header = cells(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(lines, line)) {
    const auto row = cells(line);
    std::map<std::string, std::string> named;
    for (std::size_t i = 0; i < header.size() && i < row.size(); ++i)
      named[header[i]] = row[i];
    rows.push_back(named);
  }
  return rows;
}

// The first data row's cell of `column` in a CSV file.
std::string first_cell(const std::filesystem::path& path, const std::string& column) {
  std::istringstream lines(test::read_file(path));
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  std::istringstream names(header), cells(first);
  for (std::string name, cell; std::getline(names, name, ',') && std::getline(cells, cell, ',');) {
    if (name == column) return cell;
  }
  FAIL("no column " << column);
  return {};
}

}  // namespace

TEST_CASE("max_len_policy cut serves longer outputs cut at max_len and records the cut",
          "[app][max_len]") {
  const test::ScratchDir dir("max_len_cut");
  const auto trace = dir.write("trace.csv", kTrace);
  const auto out = dir.path() / "out";
  const auto r = test::run_servesim({"run", "--workload", trace.string(), "--max-len", "1024",
                                     "--no-plots", "--requests-jsonl", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto summary = nlohmann::json::parse(test::read_file(out / "summary.json"));
  CHECK(summary["requests_completed"] == 4);
  CHECK(summary["requests_rejected"] == 2);
  CHECK(summary["requests_output_cut"] == 2);
  CHECK(summary["cut_output_tokens"] == 76 + 6);
  CHECK_THAT(r.out, Contains("Requests cut at max_len:                 2\n") &&
                        Contains("Output tokens cut at max_len:            82\n") &&
                        Contains("2: prompt tokens leave no room for an output token within the "
                                 "maximum sequence length (1024)"));
  const auto resolved = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
  CHECK(resolved["max_len_policy"] == "cut");

  const auto rows = read_rows(out / "requests.csv");
  REQUIRE(rows.size() == 6);
  // id: output tokens generated, asked for, cut, rejected.
  const std::vector<std::vector<std::string>> expected = {
      {"50", "50", "0", "0"}, {"124", "200", "76", "0"}, {"24", "30", "6", "0"},
      {"5", "5", "0", "1"},   {"10", "10", "0", "1"},    {"1", "1", "0", "0"}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("request " << i);
    const auto& row = rows[i];
    CHECK(row.at("id") == std::to_string(i));
    CHECK(row.at("output_tokens") == expected[i][0]);
    CHECK(row.at("requested_output_tokens") == expected[i][1]);
    CHECK(row.at("cut_output_tokens") == expected[i][2]);
    CHECK(row.at("rejected") == expected[i][3]);
    // A cut request ends with exactly max_len tokens.
    if (row.at("cut_output_tokens") != "0") {
      CHECK(std::stoll(row.at("prompt_tokens")) + std::stoll(row.at("output_tokens")) == 1024);
    }
  }
  // requests.jsonl carries the same columns.
  std::ifstream jsonl(out / "requests.jsonl");
  std::string line;
  std::getline(jsonl, line);
  std::getline(jsonl, line);
  const auto second = nlohmann::json::parse(line);
  CHECK(second["requested_output_tokens"] == 200);
  CHECK(second["cut_output_tokens"] == 76);
}

TEST_CASE("max_len_policy reject rejects the whole request, as vLLM's API server",
          "[app][max_len]") {
  const test::ScratchDir dir("max_len_reject");
  const auto trace = dir.write("trace.csv", kTrace);
  const std::vector<std::string> base = {"run",       "--workload", trace.string(),
                                         "--max-len", "1024",       "--json"};
  auto flag = base;
  flag.insert(flag.end(), {"--max-len-policy", "reject"});
  const auto r = test::run_servesim(flag);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["requests_completed"] == 2);
  CHECK(r.json()["requests_rejected"] == 4);
  CHECK(r.json()["requests_output_cut"] == 0);
  CHECK(r.json()["cut_output_tokens"] == 0);
  // The key gives the same run as the flag.
  auto key = base;
  key.insert(key.end(), {"--set", "max_len_policy=\"reject\""});
  CHECK(test::run_servesim(key).out == r.out);
  // The console names both reasons.
  const auto text = test::run_servesim(
      {"run", "--workload", trace.string(), "--max-len", "1024", "--max-len-policy", "reject"});
  CHECK_THAT(text.out,
             Contains("2: prompt + output tokens exceed the maximum sequence length (1024)") &&
                 Contains("2: prompt tokens leave no room for an output token") &&
                 Contains("Requests cut at max_len:                 0\n"));
  // sweep, capacity and compare take the flag where the other run flags are.
  const auto sweep =
      test::run_servesim({"sweep", "--workload", trace.string(), "--max-len", "1024",
                          "--max-len-policy", "reject", "--grid", "seed=1,2", "--json"});
  INFO(sweep.err);
  CHECK(sweep.exit_code == 0);
  test::require_error(
      test::run_servesim({"run", "--workload", trace.string(), "--max-len-policy", "truncate"}), 3,
      "field \"max_len_policy\": expected \"cut\" or \"reject\"");
}

TEST_CASE("max_len beyond the model's max_position_embeddings is refused", "[app][max_len]") {
  const test::ScratchDir dir("max_len_positions");
  const auto out = dir.path() / "out";
  for (const char* flag : {"--max-len", "--max-model-len"}) {
    test::require_error(
        test::run_servesim({"run", "--num-requests", "5", flag, "8193", "--out", out.string()}), 3,
        "max_len: 8193 tokens exceed the max_position_embeddings of llama-3-8b "
        "(8192); expected at most 8192");
    CHECK_FALSE(std::filesystem::exists(out));
  }
  const auto at_limit = test::run_servesim({"run", "--num-requests", "5", "--max-len", "8192"});
  CHECK(at_limit.exit_code == 0);
}

TEST_CASE("vllm takes vLLM V0's token limit, max(max_len, 2048), and refuses one below max_len",
          "[app][max_len]") {
  // The example: an 8,192-token prompt under --max-len 16384 (a model of 32,768
  // positions); with the limit left at 8,192 it was rejected.
  const std::vector<std::string> long_prompts = {
      "run",   "--scheduler",     "vllm", "--model",         "mistral-7b", "--max-len",
      "16384", "--prompt-tokens", "8192", "--output-tokens", "16",         "--rate",
      "inf",   "--num-requests",  "3"};
  auto served = long_prompts;
  served.push_back("--json");
  const auto r = test::run_servesim(served);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["requests_completed"] == 3);
  CHECK(r.json()["requests_rejected"] == 0);

  auto refused = long_prompts;
  refused.insert(refused.end(), {"--max-batched-tokens", "8192"});
  test::require_error(test::run_servesim(refused), 3,
                      "scheduler.max_num_batched_tokens: 8192 is smaller than max_len (16384): a "
                      "prompt of max_len tokens could never be scheduled");
  refused.back() = "16384";
  CHECK(test::run_servesim(refused).exit_code == 0);

  // Under --max-len 1024 the limit is 2,048 tokens: two 1,000-token prompts per step. orca
  // keeps its own 8,192 prompt tokens.
  const test::ScratchDir dir("vllm_v0_budget");
  const auto first_prefill = [&](const std::string& scheduler) {
    const auto out = dir.path() / scheduler;
    const auto run =
        test::run_servesim({"run", "--scheduler", scheduler, "--allocator", "paged", "--max-len",
                            "1024", "--prompt-tokens", "1000", "--output-tokens", "4", "--rate",
                            "inf", "--num-requests", "4", "--no-plots", "--out", out.string()});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    return first_cell(out / "iterations.csv", "prefill_tokens");
  };
  CHECK(first_prefill("vllm") == "2000");
  CHECK(first_prefill("orca") == "4000");
}
