#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <sstream>

#include "tests/support/test_support.h"

using namespace servesim;

namespace {

// requests.csv as one map of column to value per row (no quoting in these columns).
std::vector<std::map<std::string, std::string>> read_requests(const std::filesystem::path& path) {
  std::istringstream text(test::read_file(path));
  std::string line;
  std::getline(text, line);
  std::vector<std::string> header;
  std::stringstream fields(line);
  for (std::string field; std::getline(fields, field, ',');)
    header.push_back(field);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(text, line)) {
    std::stringstream values(line);
    std::map<std::string, std::string> row;
    std::size_t column = 0;
    for (std::string value; column < header.size() && std::getline(values, value, ',');)
      row[header[column++]] = value;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string three_turns(const std::string& turns = "3",
                        const std::string& arrival = R"({"process": "poisson", "rate_per_s": 2})") {
  return R"({"arrival": )" + arrival + R"(, "num_requests": 300,
      "lengths": {"distribution": "multi_turn",
                  "turns": {"distribution": "fixed", "count": )" +
         turns + R"(},
                  "user": {"distribution": "fixed", "tokens": 100},
                  "output": {"distribution": "fixed", "tokens": 50},
                  "think_time": {"distribution": "fixed", "seconds": 2}}})";
}

}  // namespace

TEST_CASE("a run of multi_turn sessions: each turn arrives its think time after the last ended",
          "[workload][cli]") {
  test::ScratchDir dir("session_run");
  const auto spec = dir.write("chat.json", three_turns());
  const auto out = dir.path() / "out";
  const auto r = test::run_servesim({"run", "--workload", spec.string(), "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = read_requests(out / "requests.csv");
  REQUIRE(rows.size() == 300);
  // Turn k's prompt is k x 150 + 100; turn k + 1 arrives 2 s after some turn k completed.
  std::map<std::int64_t, std::vector<double>> completions;  // by prompt tokens
  std::map<std::int64_t, std::vector<double>> arrivals;
  double last_arrival = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    CHECK(std::stoll(row.at("id")) == static_cast<std::int64_t>(i));
    const double arrival = std::stod(row.at("arrival_s"));
    CHECK(arrival >= last_arrival);  // ids in arrival order
    last_arrival = arrival;
    const std::int64_t prompt = std::stoll(row.at("prompt_tokens"));
    REQUIRE((prompt == 100 || prompt == 250 || prompt == 400));
    arrivals[prompt].push_back(arrival);
    completions[prompt].push_back(std::stod(row.at("completion_s")));
  }
  for (const auto& [prompt, times] : arrivals) {
    if (prompt == 100) continue;
    auto earlier = completions.at(prompt - 150);
    for (const double arrival : times) {
      INFO("a turn of " << prompt << " prompt tokens at " << arrival << " s");
      const auto match = std::find_if(earlier.begin(), earlier.end(), [&](double done) {
        return std::abs(done + 2.0 - arrival) < 1e-6;
      });
      REQUIRE(match != earlier.end());
      earlier.erase(match);
    }
  }
  CHECK(arrivals[250].size() >= 95);
}

TEST_CASE("a run of multi_turn sessions: a turn past max_len is rejected and ends its session",
          "[workload][cli]") {
  test::ScratchDir dir("session_reject");
  // One user, one session after the other: turns of 100, 250 (+ 50 = 300: fits), 400
  // (rejected), and no fourth turn.
  const auto spec = dir.write("chat.json", three_turns("4", R"({"process": "closed_loop",
                                                                "users": 1})"));
  const auto r = test::run_servesim(
      {"run", "--workload", spec.string(), "--max-len", "300", "--num-requests", "30", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["requests_completed"] == 20);
  CHECK(r.json()["requests_rejected"] == 10);
}

TEST_CASE("a trace given as the workload takes a row range by --set", "[workload][cli]") {
  const auto trace = test::source_dir() / "tests" / "workload" / "data" / "mooncake_trace.jsonl";
  const auto r = test::run_servesim({"run", "--workload", trace.string(), "--set",
                                     "workload.trace.first_row=1", "--set",
                                     "workload.trace.end_row=3", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["requests_completed"] == 2);
  test::require_error(test::run_servesim({"run", "--workload", trace.string(), "--set",
                                          "workload.trace.first_row=4", "--json"}),
                      3, "trace.first_row");
}

TEST_CASE("a bad Mooncake row is one line naming file, line and field, exit 3, nothing written",
          "[workload][cli]") {
  test::ScratchDir dir("mooncake_bad");
  const std::string ok = R"({"timestamp": 0, "input_length": 600, "output_length": 4, )"
                         R"("hash_ids": [0, 1]})"
                         "\n";
  const auto out = dir.path() / "out";
  const std::pair<const char*, const char*> cases[] = {
      {R"({"timestamp": 5, "input_length": 600, "output_length": 4, "hash_ids": [0, 1, 2]})",
       "bad.jsonl:2: hash_ids: 3 block ids, but input_length 600 holds at most 2"},
      {R"({"timestamp": 5, "input_length": -600, "output_length": 4})",
       "bad.jsonl:2: input_length: expected a positive whole token count, got -600"},
      {R"({"timestamp": 5, "input_length": 600, "output_length": 4.5})",
       "bad.jsonl:2: output_length: expected a positive whole token count, got 4.5"},
      {R"({"timestamp": 5, "input_length": 600, "output_length": 4)",
       "bad.jsonl:2: malformed JSON"},
  };
  for (const auto& [line, message] : cases) {
    INFO(line);
    const auto trace = dir.write("bad.jsonl", ok + line + "\n");
    test::require_error(
        test::run_servesim({"run", "--workload", trace.string(), "--out", out.string()}), 3,
        message);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}
