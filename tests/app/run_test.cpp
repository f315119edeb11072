#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cli/command.h"
#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

using test::CliResult;

CliResult run(const std::vector<std::string>& args) {
  return test::run_servesim(args);
}

nlohmann::json summary_of(const std::filesystem::path& dir) {
  return nlohmann::json::parse(test::read_file(dir / "summary.json"));
}

// requests.csv as rows of named columns.
std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream head(line);
  for (std::string cell; std::getline(head, cell, ',');)
    header.push_back(cell);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::map<std::string, std::string> cells;
    std::size_t i = 0;
    for (std::string cell; std::getline(row, cell, ',') && i < header.size(); ++i) {
      cells[header[i]] = cell;
    }
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("servesim run with no arguments serves the built-in default", "[app]") {
  test::ScratchDir dir("run_default");
  const auto out = dir.path() / "out";
  const auto r = run({"run", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("TTFT"));
  const auto summary = summary_of(out);
  CHECK(summary["requests_completed"].get<int>() + summary["requests_rejected"].get<int>() == 2000);
  CHECK(summary["requests_completed"].get<int>() > 1990);
  CHECK(summary["throughput_requests_per_s"].get<double>() == Approx(8.0).epsilon(0.1));
  for (const char* file : {"requests.csv", "iterations.csv", "resolved_config.json"}) {
    CHECK(std::filesystem::exists(out / file));
  }
  const auto resolved = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
  CHECK(resolved["model"] == "llama-3-8b");
  CHECK(resolved["workload"]["arrival"]["rate_per_s"] == 8.0);
  // The default engine, vLLM V1, with its defaults for a GPU of 70 GiB or more.
  CHECK(resolved["engine"]["name"] == "vllm");
  CHECK(resolved["scheduler"]["name"] == "vllm_v1");
  CHECK(resolved["scheduler"]["max_num_seqs"] == 1024);
  CHECK(resolved["scheduler"]["max_num_batched_tokens"] == 8192);
  CHECK(resolved["engine"]["host"]["overlaps_device"] == true);
}

TEST_CASE("runs are deterministic for a seed, in one process, and differ across seeds", "[app]") {
  test::ScratchDir dir("run_determinism");
  const std::vector<std::string> base{"run", "--num-requests", "300", "--rate", "20"};
  auto with = [&](const std::string& name, const std::string& seed) {
    auto args = base;
    args.insert(args.end(), {"--seed", seed, "--out", (dir.path() / name).string()});
    REQUIRE(run(args).exit_code == 0);
    return test::read_file(dir.path() / name / "summary.json");
  };
  const std::string first = with("a", "7");
  const std::string second = with("b", "7");
  const std::string other = with("c", "8");
  CHECK(first == second);
  CHECK(test::read_file(dir.path() / "a" / "requests.csv") ==
        test::read_file(dir.path() / "b" / "requests.csv"));
  CHECK(first != other);
}

TEST_CASE("one request on an idle replica matches the cost model step by step", "[app]") {
  test::ScratchDir dir("run_single");
  const auto out = dir.path() / "out";
  REQUIRE(run({"run", "--prompt-tokens", "512", "--output-tokens", "4", "--num-requests", "1",
               "--out", out.string()})
              .exit_code == 0);
  RooflineOptions options;  // with the default engine's costs
  options.engine = test::shipped_engine("vllm").costs;
  options.engine.cuda_graph_capture_sizes.erase(  // cut at 2 x max_num_seqs, as assembly does
      std::upper_bound(options.engine.cuda_graph_capture_sizes.begin(),
                       options.engine.cuda_graph_capture_sizes.end(), 2 * 1024),
      options.engine.cuda_graph_capture_sizes.end());
  const RooflineModel model(test::shipped_model("llama-3-8b"), test::shipped_hardware("h100-sxm"),
                            options);
  BatchShape prefill;
  prefill.add_prefill(512, 0);
  // The engine sees the request its frontend latency after it was sent.
  double expected_e2e =
      options.engine.host.frontend_latency_s + model.estimate(prefill).total_time_s;
  const double expected_ttft = expected_e2e;
  for (int context = 513; context <= 515; ++context) {
    BatchShape decode;
    decode.add_decode(context);
    expected_e2e += model.estimate(decode).total_time_s;
  }
  const auto rows = read_csv(out / "requests.csv");
  REQUIRE(rows.size() == 1);
  CHECK(std::stod(rows[0].at("ttft_s")) == Approx(expected_ttft).epsilon(1e-6));
  CHECK(std::stod(rows[0].at("e2e_s")) == Approx(expected_e2e).epsilon(1e-6));
  CHECK(std::stod(rows[0].at("tpot_s")) ==
        Approx((expected_e2e - expected_ttft) / 3).epsilon(1e-6));
  CHECK(read_csv(out / "iterations.csv").size() == 4);
}

TEST_CASE("Little's law holds on a steady run", "[app]") {
  test::ScratchDir dir("run_little");
  const auto out = dir.path() / "out";
  const double rate = 6.0;
  REQUIRE(
      run({"run", "--rate", "6", "--num-requests", "3000", "--seed", "3", "--out", out.string()})
          .exit_code == 0);
  // Time-average number in system over the arrival window, from arrival and completion times.
  const auto rows = read_csv(out / "requests.csv");
  std::vector<std::pair<double, int>> events;
  double e2e_sum = 0;
  double last_arrival = 0;
  for (const auto& row : rows) {
    const double arrival = std::stod(row.at("arrival_s"));
    const double completion = std::stod(row.at("completion_s"));
    events.emplace_back(arrival, +1);
    events.emplace_back(completion, -1);
    e2e_sum += completion - arrival;
    last_arrival = std::max(last_arrival, arrival);
  }
  std::sort(events.begin(), events.end());
  double area = 0, previous = 0;
  int in_system = 0;
  for (const auto& [time, change] : events) {
    const double t = std::min(time, last_arrival);
    area += in_system * (t - previous);
    previous = t;
    in_system += change;
  }
  const double mean_in_system = area / last_arrival;
  const double mean_e2e = e2e_sum / static_cast<double>(rows.size());
  CHECK(mean_in_system == Approx(rate * mean_e2e).epsilon(0.08));
}

TEST_CASE("trace replay of the Azure conversation trace completes every request", "[app]") {
  const auto shared_trace = test::shared_data_path("traces/AzureLLMInferenceTrace_conv.csv");
  if (!shared_trace) return;
  const std::filesystem::path trace = *shared_trace;
  test::ScratchDir dir("run_trace");
  const auto spec =
      dir.write("trace.json", nlohmann::json({{"arrival", {{"process", "trace"}}},
                                              {"lengths", {{"distribution", "trace"}}},
                                              {"trace", {{"path", trace.string()}}}})
                                  .dump());
  // A model of 32,768 positions: --max-len may not pass them.
  const auto r = run({"run", "--workload", spec.string(), "--model", "mistral-7b", "--replicas",
                      "2", "--router", "least_outstanding", "--max-len", "32768", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto summary = nlohmann::json::parse(r.out);
  CHECK(summary["requests_completed"].get<int>() + summary["requests_rejected"].get<int>() ==
        19366);
  CHECK(summary["requests_completed"].get<int>() > 19300);
}

TEST_CASE("bad run input: clear error, documented exit code, no output directory", "[app]") {
  test::ScratchDir dir("run_bad");
  const auto out = dir.path() / "out";
  const auto expect_error = [&](std::vector<std::string> args, int code,
                                const std::string& needle) {
    args.insert(args.end(), {"--out", out.string()});
    const auto r = run(args);
    INFO(r.err);
    CHECK(r.exit_code == code);
    CHECK_THAT(r.err, Contains(needle));
    CHECK_FALSE(std::filesystem::exists(out));
  };
  const auto config = dir.write("c.json", R"({"replicass": 2})");
  expect_error({"run", "--config", config.string()}, 3, "\"replicass\": unknown key");
  const auto typed = dir.write("t.json", R"({"tp": "two"})");
  expect_error({"run", "--config", typed.string()}, 3, "\"tp\"");
  expect_error({"run", "--replicas", "0"}, 3, "replicas");
  expect_error({"run", "--rate", "-2"}, 3, "rate_per_s");
  expect_error({"run", "--prompt-tokens", "0", "--output-tokens", "5"}, 3, "tokens");
  expect_error({"run", "--router", "fastest"}, 3, "unknown router");
  expect_error({"run", "--workload", "nope"}, 3, "unknown workload preset \"nope\"");
  expect_error({"run", "--prompt-tokens", "5"}, 2, "--output-tokens");
  const auto bad_trace =
      dir.write("bad.csv", "arrival_time_s,prompt_tokens,output_tokens\n0.0,10,5\n0.5,x,5\n");
  const auto spec =
      dir.write("trace.json", nlohmann::json({{"arrival", {{"process", "trace"}}},
                                              {"lengths", {{"distribution", "trace"}}},
                                              {"trace", {{"path", bad_trace.string()}}}})
                                  .dump());
  expect_error({"run", "--workload", spec.string()}, 3, "bad.csv:3");
  expect_error({"run", "--model", "llama-3-70b", "--hw", "a100-40gb"}, 4, "does not fit");
}

TEST_CASE("the output option refuses to replace a directory that holds no servesim run", "[app]") {
  test::ScratchDir dir("run_out_guard");
  dir.write("precious.txt", "keep me");
  const auto r = run({"run", "--num-requests", "5", "--out", dir.path().string()});
  CHECK(r.exit_code == 3);
  CHECK(std::filesystem::exists(dir.path() / "precious.txt"));
}

TEST_CASE("a closed loop keeps at most its users' requests in the system", "[app]") {
  test::ScratchDir dir("run_closed_loop");
  const auto out = dir.path() / "out";
  REQUIRE(run({"run", "--arrival", "closed_loop", "--set", "workload.arrival.users=3", "--set",
               "workload.arrival.think_time_s=0.2", "--num-requests", "60", "--out", out.string()})
              .exit_code == 0);
  const auto rows = read_csv(out / "requests.csv");
  REQUIRE(rows.size() == 60);
  std::vector<std::pair<double, int>> events;
  for (const auto& row : rows) {
    events.emplace_back(std::stod(row.at("arrival_s")), +1);
    events.emplace_back(std::stod(row.at("completion_s")), -1);
  }
  std::sort(events.begin(), events.end());  // completions first at equal times
  int in_system = 0, most = 0;
  for (const auto& [time, change] : events) {
    in_system += change;
    most = std::max(most, in_system);
  }
  CHECK(most == 3);
}

TEST_CASE("every engine finishes every request of a burst of long prompts", "[app][engines]") {
  // GPUStack's long random prompts (100 x 32,000 in, 100 out, all sent at once): SGLang's
  // batch-full flag once stayed set when the last running request left, and the run ended
  // with 89 requests unfinished (exit 5). A steady rate of the same prompts as well.
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "engines")) {
    if (entry.path().extension() != ".json") continue;  // engines/bands/
    const std::string engine = entry.path().stem().string();
    for (const char* rate : {"inf", "2"}) {
      INFO(engine << " at " << rate << " req/s");
      const CliResult r =
          run({"run", "--engine", engine, "--model", "qwen3-8b", "--hw", "h100-sxm",
               "--prompt-tokens", "32000", "--output-tokens", "100", "--num-requests", "100",
               "--rate", rate, "--max-len", "40960", "--json"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.json()["requests_completed"] == 100);
    }
  }
}
