#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <regex>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

using test::CliResult;
using Args = std::vector<std::string>;

Args concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// summary.json's text for `servesim run FLAGS --json`.
std::string summary_text(const Args& flags) {
  const auto r = test::run_servesim(concat({"run", "--json"}, flags));
  INFO(Catch::Detail::stringify(flags) << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// vllm bench serve's spelling and servesim's give byte-identical summaries, which differ from
// the run with neither (so the setting took effect).
void require_same_run(const Args& servesim_flags, const Args& vllm_flags, const Args& common) {
  INFO("servesim: " << Catch::Detail::stringify(servesim_flags)
                    << "; vLLM: " << Catch::Detail::stringify(vllm_flags));
  const std::string ours = summary_text(concat(common, servesim_flags));
  CHECK(ours == summary_text(concat(common, vllm_flags)));
  CHECK(ours != summary_text(common));
}

nlohmann::json saved_result(const test::ScratchDir& dir, const Args& flags) {
  const auto path = dir.path() / "result.json";
  const auto r = test::run_servesim(concat({"run", "--save-result", path.string()}, flags));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(test::read_file(path));
}

}  // namespace

TEST_CASE("vllm bench serve's workload flags give the same run as servesim's own",
          "[cli][vllm_bench]") {
  const Args sixty = {"--num-requests", "60"};
  require_same_run({"--rate", "20"}, {"--request-rate", "20"}, sixty);
  require_same_run({"--rate", "inf"}, {"--request-rate", "inf"}, sixty);
  require_same_run({"--num-requests", "30"}, {"--num-prompts", "30"}, {"--rate", "20"});
  // Burstiness B: gamma gaps of shape B, so cv = 1 / sqrt(B); 1 is Poisson.
  require_same_run({"--arrival", "gamma", "--cv", "0.5"}, {"--burstiness", "4"}, sixty);
  require_same_run({"--arrival", "gamma", "--cv", "2"}, {"--burstiness", "0.25"}, sixty);
  CHECK(summary_text(concat(sixty, {"--burstiness", "1"})) ==
        summary_text(concat(sixty, {"--arrival", "poisson"})));
  require_same_run({"--max-concurrency", "4"}, {"--set", "workload.arrival.max_concurrency=4"},
                   {"--rate", "20", "--num-requests", "60"});
  // The random dataset: fixed lengths at a range ratio of 0, vLLM's defaults 1024 and 128.
  require_same_run(
      {"--prompt-tokens", "300", "--output-tokens", "40"},
      {"--dataset-name", "random", "--random-input-len", "300", "--random-output-len", "40"},
      sixty);
  require_same_run({"--prompt-tokens", "1024", "--output-tokens", "128"},
                   {"--dataset-name", "random"}, sixty);
  // A ratio: uniform over [floor(301 x 0.75), ceil(301 x 1.25)] = [225, 377] and
  // [max(1, floor(3 x 0.75)), ceil(3 x 1.25)] = [2, 4].
  require_same_run(
      {"--set",
       R"(workload.lengths={"distribution": "independent", "prompt": {"distribution": "uniform", "min": 225, "max": 377}, "output": {"distribution": "uniform", "min": 2, "max": 4}})"},
      {"--dataset-name", "random", "--random-input-len", "301", "--random-output-len", "3",
       "--random-range-ratio", "0.25"},
      sixty);
  require_same_run({"--workload", "sharegpt"},
                   {"--dataset-name", "sharegpt", "--dataset-path",
                    "ShareGPT_V3_unfiltered_cleaned_split.json", "--ignore-eos"},
                   sixty);
}

TEST_CASE("max-concurrency with an infinite rate is a closed loop of as many users",
          "[cli][vllm_bench]") {
  // Every request arrives at 0; each completion sends the next at once: the closed loop.
  CHECK(summary_text({"--request-rate", "inf", "--max-concurrency", "8", "--num-prompts", "80"}) ==
        summary_text({"--arrival", "closed_loop", "--set", "workload.arrival.users=8", "--set",
                      "workload.arrival.think_time_s=0", "--num-requests", "80"}));
}

TEST_CASE("max-concurrency holds the requests in flight to N", "[cli][vllm_bench]") {
  test::ScratchDir dir("vllm_bench_concurrency");
  const Args busy = {"--rate", "40", "--num-requests", "200", "--save-detailed"};
  const auto open = saved_result(dir, busy);
  CHECK(open["max_concurrency"].is_null());
  CHECK(open["max_concurrent_requests"].get<int>() > 6);
  const auto limited = saved_result(dir, concat(busy, {"--max-concurrency", "6"}));
  CHECK(limited["max_concurrency"] == 6);
  CHECK(limited["max_concurrent_requests"] == 6);
  // Requests wait at the client, so they are sent later: the run lasts longer.
  CHECK(limited["duration"].get<double>() > open["duration"].get<double>());
}

TEST_CASE("vllm bench serve's flags refuse what they cannot mean", "[cli][vllm_bench]") {
  test::require_error(test::run_servesim({"run", "--random-input-len", "5"}), 2,
                      "--random-input-len: only with --dataset-name random");
  test::require_error(
      test::run_servesim({"run", "--dataset-name", "sonnet"}), 2,
      "--dataset-name: \"sonnet\" is not a dataset servesim has (random, sharegpt)");
  test::require_error(
      test::run_servesim({"run", "--dataset-name", "random", "--random-range-ratio", "1"}), 3,
      "--random-range-ratio: expected a ratio in [0, 1)");
  test::require_error(test::run_servesim({"run", "--burstiness", "0"}), 3,
                      "--burstiness: expected a number > 0");
  test::require_error(test::run_servesim({"run", "--burstiness", "2", "--cv", "3"}), 2,
                      "--cv and --burstiness are the same setting");
  test::require_error(test::run_servesim({"run", "--request-rate", "2", "--rate", "3"}), 2,
                      "--rate and --request-rate are the same setting");
  test::require_error(
      test::run_servesim({"run", "--dataset-name", "sharegpt", "--workload", "alpaca"}), 2,
      "--workload and --dataset-name are the same setting");
  test::require_error(test::run_servesim({"run", "--dataset-path", "x.json"}), 2,
                      "--dataset-path: only with --dataset-name sharegpt");
  test::require_error(test::run_servesim({"run", "--max-concurrency", "0"}), 3, "max_concurrency");
  test::require_error(test::run_servesim({"run", "--save-detailed"}), 2,
                      "--save-detailed: only with --save-result");
  // Flags vLLM has and servesim spells otherwise point at servesim's spelling.
  test::require_error(test::run_servesim({"run", "--qps", "4"}), 2,
                      "unrecognised option '--qps'; servesim's spelling: --rate (--request-rate)");
  test::require_error(test::run_servesim({"run", "--input-len", "4"}), 2,
                      "servesim's spelling: --random-input-len N with --dataset-name random");
  test::require_error(test::run_servesim({"run", "--reqest-rate", "4"}), 2,
                      "did you mean --request-rate?");
}

TEST_CASE("save-result writes vLLM's setup and peak keys", "[cli][vllm_bench]") {
  test::ScratchDir dir("vllm_bench_keys");
  // Ten requests at t = 0, every one admitted at once: ten in flight at the peak.
  const auto v = saved_result(
      dir, {"--rate", "inf", "--num-requests", "10", "--prompt-tokens", "100", "--output-tokens",
            "10", "--label", "trial", "--tokenizer", "meta-llama/Meta-Llama-3-8B"});
  CHECK(std::regex_match(v["date"].get<std::string>(), std::regex(R"(\d{8}-\d{6})")));
  CHECK(v["endpoint_type"] == "servesim");
  CHECK(v["label"] == "trial");
  CHECK(v["tokenizer_id"] == "meta-llama/Meta-Llama-3-8B");
  CHECK(v["max_concurrent_requests"] == 10);
  // 100 output tokens, all within the first second (10 decode steps of a few ms).
  CHECK(v["duration"].get<double>() < 1);
  CHECK(v["max_output_tokens_per_s"] == 100.0);
  CHECK(v["request_rate"] == "inf");

  const auto plain = saved_result(dir, {"--num-requests", "10"});
  CHECK(plain["label"].is_null());
  CHECK(plain["tokenizer_id"] == plain["model_id"]);
  CHECK_FALSE(plain.contains("input_lens"));

  // Over several seconds: the peak second holds at least the mean, at most all tokens.
  const auto longer = saved_result(dir, {"--num-requests", "200", "--rate", "10"});
  const double peak = longer["max_output_tokens_per_s"];
  CHECK(peak >= longer["output_throughput"].get<double>());
  CHECK(peak < longer["total_output_tokens"].get<double>());
  CHECK(peak == std::floor(peak));

  // SOURCE_DATE_EPOCH fixes the date, for reproducible files.
  ::setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  const auto dated = saved_result(dir, {"--num-requests", "10"});
  ::unsetenv("SOURCE_DATE_EPOCH");
  CHECK(dated["date"] == "20231114-221320");
}

TEST_CASE("save-detailed lists every request, as vLLM's file does", "[cli][vllm_bench]") {
  test::ScratchDir dir("vllm_bench_detailed");
  const auto v =
      saved_result(dir, {"--num-requests", "50", "--rate", "10", "--save-detailed",
                         "--percentile-metrics", "ttft,e2el", "--metric-percentiles", "50,90"});
  for (const char* key : {"input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times",
                          "generated_texts", "errors"}) {
    INFO(key);
    REQUIRE(v[key].size() == 50);
  }
  const auto sum = [](const nlohmann::json& list) {
    return std::accumulate(
        list.begin(), list.end(), 0.0,
        [](double total, const nlohmann::json& x) { return total + x.get<double>(); });
  };
  CHECK(sum(v["input_lens"]) == v["total_input_tokens"].get<double>());
  CHECK(sum(v["output_lens"]) == v["total_output_tokens"].get<double>());
  CHECK(sum(v["ttfts"]) / 50 * 1000 == Approx(v["mean_ttft_ms"].get<double>()).epsilon(1e-9));
  CHECK(sum(v["latencies"]) / 50 * 1000 == Approx(v["mean_e2el_ms"].get<double>()).epsilon(1e-9));
  CHECK(v["generated_texts"][0] == "");
  CHECK(v["errors"][0] == "");
  CHECK(v["itls"][0].empty());
  // Only the metrics and percentiles asked for.
  CHECK(v.contains("p50_ttft_ms"));
  CHECK(v.contains("p90_e2el_ms"));
  CHECK_FALSE(v.contains("p99_ttft_ms"));
  CHECK_FALSE(v.contains("mean_tpot_ms"));
  CHECK_FALSE(v.contains("mean_itl_ms"));
  test::require_error(test::run_servesim({"run", "--save-result", (dir.path() / "x.json").string(),
                                          "--percentile-metrics", "ttft,latency"}),
                      3, "--percentile-metrics: unknown metric \"latency\"");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "x.json"));
}

TEST_CASE("validate reads back a result file servesim wrote, detailed or not",
          "[cli][vllm_bench]") {
  test::ScratchDir dir("vllm_bench_round_trip");
  for (const bool detailed : {false, true}) {
    const auto path = dir.path() / (detailed ? "detailed.json" : "plain.json");
    Args flags = {"run",        "--num-requests",      "40",     "--request-rate",
                  "4",          "--dataset-name",      "random", "--random-input-len",
                  "200",        "--random-output-len", "30",     "--save-result",
                  path.string()};
    if (detailed) flags.push_back("--save-detailed");
    const auto r = test::run_servesim(flags);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto check =
        test::run_servesim({"validate", "--measured", path.string(), "--hw", "h100-sxm", "--json"});
    INFO(check.err);
    REQUIRE(check.exit_code == 0);
    const nlohmann::json result = check.json();
    const nlohmann::json& point = result.at("points").at(0);
    CHECK(point.at("rate_per_s") == 4.0);
    // Fixed lengths: the replay (mean or per-request lengths) is the run's own workload.
    CHECK(std::fabs(point.at("metrics").at("ttft_ms_mean").at("relative_error").get<double>()) <
          0.05);
  }
}
