#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/core/sim_time.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/impl/console_reporter.h"
#include "sim/metrics/impl/csv_reporter.h"
#include "sim/metrics/impl/json_reporter.h"
#include "sim/metrics/record_columns.h"
#include "sim/metrics/summary_json.h"
#include "tests/support/metrics_fixtures.h"
#include "tests/support/test_support.h"

using servesim::MetricsCollector;
using servesim::MetricsOptions;
using servesim::RunResult;

namespace {

RunResult scripted_result(MetricsOptions options = {}) {
  MetricsCollector collector(options);
  servesim::test::feed_scripted_run(collector);
  auto summary = collector.summarize(10.0);
  return RunResult{summary, std::move(collector)};
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// RFC 4180 rows: quoted fields may hold commas and doubled quotes (no line breaks here).
std::vector<std::vector<std::string>> read_csv(const std::filesystem::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    rows.push_back(fields);
  }
  return rows;
}

const std::set<std::string> kSummaryKeys{"requests_completed",
                                         "requests_rejected",
                                         "requests_output_cut",
                                         "cut_output_tokens",
                                         "duration_s",
                                         "throughput_requests_per_s",
                                         "throughput_output_tokens_per_s",
                                         "throughput_total_tokens_per_s",
                                         "ttft_s",
                                         "tpot_s",
                                         "itl_s",
                                         "e2e_s",
                                         "normalized_latency_s_per_token",
                                         "mean_batch_size",
                                         "kv_utilization",
                                         "kv_memory",
                                         "preemptions",
                                         "prefix_cache_hit_rate",
                                         "prefix_cache_host_hit_rate",
                                         "itl_relative_error",
                                         "latency_relative_error"};

std::set<std::string> keys_of(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& item : object.items())
    keys.insert(item.key());
  return keys;
}

}  // namespace

TEST_CASE("Empty-run summary.json has every key, zeros and no NaN", "[metrics]") {
  MetricsOptions options;
  const bool with_slo = GENERATE(false, true);
  if (with_slo) options.slo_tpot_s = 0.1;
  const auto json = servesim::summary_to_json(MetricsCollector(options).summarize(0.0));
  auto expected_keys = kSummaryKeys;
  if (with_slo) expected_keys.insert("slo_attainment");
  CHECK(keys_of(json) == expected_keys);
  for (const char* key : {"ttft_s", "tpot_s", "itl_s", "e2e_s"}) {
    CHECK(keys_of(json[key]) == std::set<std::string>{"mean", "p50", "p90", "p99", "max"});
    CHECK(json[key]["p99"] == 0);
  }
  CHECK(json["requests_completed"] == 0);
  CHECK(json["throughput_total_tokens_per_s"] == 0);
  const std::string text = json.dump();
  CHECK(text.find("null") == std::string::npos);  // nlohmann writes NaN as null
  CHECK(text.find("nan") == std::string::npos);
  CHECK(nlohmann::json::parse(text) == json);
}

TEST_CASE("JsonReporter writes the summary", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_json");
  MetricsOptions options;
  options.slo_ttft_s = 1.0;
  const auto result = scripted_result(options);
  servesim::JsonReporter().write(result, dir.path() / "out");
  const auto json = nlohmann::json::parse(read_file(dir.path() / "out" / "summary.json"));
  CHECK(json == servesim::summary_to_json(result.summary));
  CHECK(json["requests_completed"] == 4);
  CHECK(json["preemptions"] == 3);
  CHECK(json["slo_attainment"] == 0.75);
  CHECK(json["e2e_s"]["max"] == 3.25);
}

TEST_CASE("CsvReporter writes one sorted row per request and per iteration", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_csv");
  auto result = scripted_result();
  servesim::CsvReporter().write(result, dir.path());

  const auto requests = read_csv(dir.path() / "requests.csv");
  REQUIRE(requests.size() == 6);  // header, 4 completed, 1 rejected
  CHECK(requests[0] == std::vector<std::string>{
                           "id", "replica", "arrival_s", "first_scheduled_s", "first_token_s",
                           "completion_s", "prompt_tokens", "output_tokens",
                           "requested_output_tokens", "cut_output_tokens", "preemptions", "ttft_s",
                           "tpot_s", "e2e_s", "rejected", "reject_reason", "cached_tokens"});
  for (std::size_t row = 1; row < requests.size(); ++row) {
    CHECK(requests[row].size() == 17);
    CHECK(requests[row][16] == "0");                 // no prefix cache
    CHECK(requests[row][0] == std::to_string(row));  // sorted by id
    CHECK(requests[row][8] == requests[row][7]);     // nothing cut: requested = generated
    CHECK(requests[row][9] == "0");
  }
  CHECK(requests[2][11] == "0.5");   // request 2 ttft
  CHECK(requests[2][12] == "0.25");  // request 2 tpot
  CHECK(requests[3][12].empty());    // request 3: one output token, no tpot
  CHECK(requests[5][14] == "1");
  CHECK(requests[5][11].empty());
  CHECK(requests[5][15] == "prompt too long, \"4096\" > 2048");
  CHECK(requests[1][14] == "0");

  const auto iterations = read_csv(dir.path() / "iterations.csv");
  REQUIRE(iterations.size() == 3);
  CHECK(iterations[0] == std::vector<std::string>{"replica",
                                                  "start_s",
                                                  "duration_s",
                                                  "batch_size",
                                                  "prefill_tokens",
                                                  "decode_tokens",
                                                  "preempted",
                                                  "kv_used_tokens",
                                                  "kv_capacity_tokens",
                                                  "kv_utilization",
                                                  "kv_token_states",
                                                  "kv_reserved",
                                                  "kv_internal_fragmentation",
                                                  "kv_external_fragmentation",
                                                  "kv_free",
                                                  "kv_cached",
                                                  "cached_tokens",
                                                  "prefill_sequences",
                                                  "prefill_context_tokens",
                                                  "prefill_attention_pairs",
                                                  "prefill_masked_pairs",
                                                  "decode_context_tokens",
                                                  "sampled_sequences"});
  CHECK(iterations[2][0] == "1");
  CHECK(iterations[2][9] == "0.1");
}

TEST_CASE("CSV timestamps read back exactly", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_round_trip");
  MetricsCollector collector;
  // Nanosecond times late in a long run need 13 significant digits.
  const double arrival_s = 3600.123456789;
  const double completion_s = 3600.0 + 1.0 / 3.0;
  collector.on_request_finished(
      servesim::test::finished_request(7, arrival_s, completion_s, completion_s, 1, 1));
  servesim::write_requests_csv(collector, dir.path() / "requests.csv");
  const auto rows = read_csv(dir.path() / "requests.csv");
  REQUIRE(rows.size() == 2);
  CHECK(std::stod(rows[1][2]) == arrival_s);
  CHECK(std::stod(rows[1][5]) == completion_s);
}

TEST_CASE("requests.jsonl is written only when asked for", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_jsonl");
  const auto result = scripted_result();
  servesim::CsvReporter().write(result, dir.path() / "plain");
  CHECK(std::filesystem::exists(dir.path() / "plain" / "requests.csv"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "plain" / "requests.jsonl"));
  servesim::CsvReporter(true).write(result, dir.path() / "asked");
  CHECK(std::filesystem::exists(dir.path() / "asked" / "requests.jsonl"));
}

TEST_CASE("Identical collectors give byte-identical files", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_determinism");
  MetricsOptions options;
  options.slo_ttft_s = 0.8;
  for (const char* run : {"a", "b"}) {
    const auto result = scripted_result(options);
    servesim::JsonReporter().write(result, dir.path() / run);
    servesim::CsvReporter().write(result, dir.path() / run);
  }
  for (const char* file : {"summary.json", "requests.csv", "iterations.csv"}) {
    const auto a = read_file(dir.path() / "a" / file);
    CHECK_FALSE(a.empty());
    CHECK(a == read_file(dir.path() / "b" / file));
  }
}

TEST_CASE("CsvReporter skips the files whose records were not kept", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_lean");
  MetricsOptions options;
  options.keep_request_records = false;
  servesim::CsvReporter().write(scripted_result(options), dir.path());
  CHECK_FALSE(std::filesystem::exists(dir.path() / "requests.csv"));
  CHECK(std::filesystem::exists(dir.path() / "iterations.csv"));
}

TEST_CASE("Writers name the path they cannot write", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_unwritable");
  // A regular file where the output folder should be.
  const auto blocker = dir.write("not_a_dir", "x");
  const auto result = scripted_result();
  try {
    servesim::JsonReporter().write(result, blocker);
    FAIL("expected an InputError");
  } catch (const servesim::InputError& error) {
    CHECK_THAT(error.what(), Catch::Contains((blocker / "summary.json").string()));
  }
  CHECK_THROWS_AS(servesim::write_iterations_csv(result.collector, blocker / "iterations.csv"),
                  servesim::InputError);
}

TEST_CASE("Console summary reads like vLLM's benchmark result block", "[metrics]") {
  MetricsOptions options;
  options.slo_tpot_s = 0.5;
  std::ostringstream with_slo;
  servesim::ConsoleReporter(with_slo).write(scripted_result(options), "unused");
  std::ostringstream without_slo;
  servesim::print_summary(without_slo, scripted_result().summary);

  const std::string text = with_slo.str();
  CHECK(text.rfind("============ Serving Benchmark Result ============\n", 0) == 0);
  CHECK_THAT(text, Catch::Contains("Successful requests:                     4\n"));
  CHECK_THAT(text, Catch::Contains("Total input tokens:                      200\n"));
  CHECK_THAT(text, Catch::Contains("Request throughput (req/s):"));
  CHECK_THAT(text, Catch::Contains("Request goodput (req/s):                 0.30\n"));
  CHECK_THAT(text, Catch::Contains("---------------Time to First Token----------------\n"));
  CHECK_THAT(text, Catch::Contains("-----Time per Output Token (excl. 1st token)------\n"));
  CHECK_THAT(text, Catch::Contains("Median TTFT (ms):                        750.00\n"));
  CHECK_THAT(text, Catch::Contains("Std TTFT (ms):") && Catch::Contains("P95 TTFT (ms):"));
  CHECK_THAT(text, Catch::Contains("(percentiles +-1.0%)"));
  CHECK_THAT(text, Catch::Contains("Max E2EL (ms):                           3250.00\n"));
  CHECK_THAT(text, Catch::Contains("SLO attainment (%):                      75.0\n"));
  CHECK(text.size() > 51);
  CHECK(text.substr(text.size() - 51) == std::string(50, '=') + "\n");
  CHECK_THAT(without_slo.str(), !Catch::Contains("SLO attainment") && !Catch::Contains("goodput"));
}

TEST_CASE("Console values stay apart from their labels however large", "[metrics]") {
  servesim::RunSummary summary;
  // A saturated run: hours of queueing are eight-digit milliseconds.
  summary.ttft_s = {12345.678, 23456.789, 34567.891, 45678.912, 56789.123, 0, 0};
  summary.e2e_s = {123456.789, 223456.789, 323456.789, 423456.789, 523456.789, 0, 0};
  std::ostringstream out;
  servesim::print_summary(out, summary);
  CHECK_THAT(out.str(), Catch::Contains("Max TTFT (ms):                           56789123.00\n"));
  CHECK_THAT(out.str(), Catch::Contains("Max E2EL (ms):                           523456789.00\n"));
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(line.size() <= 60);  // one label, one value: nothing runs together or wraps
  }
}

namespace {

// Every cell of a CSV file against the column table the module builds its DataFrames from:
// the same names in the same order, integers as written, doubles equal to the double the
// written text reads back as (NaN for an empty cell), texts unquoted (nullopt for empty).
void check_table_reads_back(const std::vector<std::vector<std::string>>& rows,
                            const std::vector<servesim::ColumnValues>& table) {
  REQUIRE(!rows.empty());
  REQUIRE(rows[0].size() == table.size());
  for (std::size_t c = 0; c < table.size(); ++c) {
    INFO("column " << table[c].name);
    CHECK(rows[0][c] == table[c].name);
    std::visit(
        [&](const auto& values) {
          REQUIRE(values.size() + 1 == rows.size());
          for (std::size_t r = 0; r < values.size(); ++r) {
            const std::string& cell = rows[r + 1][c];
            using Value = std::decay_t<decltype(values[r])>;
            if constexpr (std::is_same_v<Value, std::int64_t>) {
              CHECK(cell == std::to_string(values[r]));
            } else if constexpr (std::is_same_v<Value, double>) {
              if (std::isnan(values[r])) {
                CHECK(cell.empty());
              } else {
                CHECK(std::stod(cell) == values[r]);
              }
            } else {
              CHECK(cell == values[r].value_or(""));
            }
          }
        },
        table[c].values);
  }
}

}  // namespace

TEST_CASE("The record tables read back as requests.csv and iterations.csv", "[metrics]") {
  servesim::test::ScratchDir dir("metrics_tables");
  MetricsCollector collector;
  servesim::test::feed_scripted_run(collector);
  // Times whose differences carry noise digits, which the files round to 9 significant ones.
  const double arrival_s = 1.0 / 3.0;
  const double first_token_s = 2.0 / 3.0 + 1e-12;
  collector.on_request_finished(
      servesim::test::finished_request(6, arrival_s, first_token_s, 7.1, 10, 3));
  servesim::write_requests_csv(collector, dir.path() / "requests.csv");
  servesim::write_iterations_csv(collector, dir.path() / "iterations.csv");

  const auto requests = servesim::request_table(collector.request_records());
  check_table_reads_back(read_csv(dir.path() / "requests.csv"), requests);
  check_table_reads_back(read_csv(dir.path() / "iterations.csv"),
                         servesim::iteration_table(collector.iteration_records()));

  // Request 6 is the last row: its TTFT is the 9-digit value, not the raw difference.
  const auto& ttft = std::get<std::vector<double>>(requests[11].values);
  REQUIRE(requests[11].name == "ttft_s");
  CHECK(ttft.back() == 0.333333333);
  CHECK(ttft.back() != first_token_s - arrival_s);
  // The rejected request 5 has no service times and its reason as text.
  CHECK(std::isnan(std::get<std::vector<double>>(requests[3].values)[4]));
  REQUIRE(requests[15].name == "reject_reason");
  CHECK(std::get<std::vector<std::optional<std::string>>>(requests[15].values)[4] ==
        "prompt too long, \"4096\" > 2048");
  CHECK(!std::get<std::vector<std::optional<std::string>>>(requests[15].values)[0]);
}
