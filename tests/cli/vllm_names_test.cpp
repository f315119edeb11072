#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

using test::CliResult;
using Args = std::vector<std::string>;

CliResult run(const Args& args) {
  return test::run_servesim(args);
}

Args concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `servesim run ... --json` (summary.json's text) for a small run.
std::string summary_text(const Args& flags) {
  const auto r = run(concat({"run", "--num-requests", "60", "--json"}, flags));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// A servesim flag and vLLM's name for it give byte-identical summaries, and the setting has
// an effect (so the comparison is not between two runs that ignored it).
void require_same_run(const Args& servesim_flags, const Args& vllm_flags, const Args& common = {}) {
  INFO("servesim: " << Catch::Detail::stringify(servesim_flags)
                    << "; vLLM: " << Catch::Detail::stringify(vllm_flags));
  const std::string ours = summary_text(concat(common, servesim_flags));
  CHECK(ours == summary_text(concat(common, vllm_flags)));
  CHECK(ours != summary_text(common));
}

}  // namespace

TEST_CASE("vLLM's engine flags give the same run as servesim's own", "[cli][vllm]") {
  const Args sharegpt_at_20 = {"--rate", "20"};
  require_same_run({"--tp", "2"}, {"--tensor-parallel-size", "2"});
  require_same_run({"--pp", "2"}, {"--pipeline-parallel-size", "2"});
  require_same_run({"--max-len", "512"}, {"--max-model-len", "512"});
  require_same_run({"--mem-util", "0.5"}, {"--gpu-memory-utilization", "0.5"},
                   {"--model", "llama-2-7b", "--hw", "a100-40gb", "--rate", "inf"});
  require_same_run({"--kv-dtype", "fp8"}, {"--kv-cache-dtype", "fp8"});
  require_same_run({"--kv-dtype", "fp8"}, {"--kv-cache-dtype", "fp8_e4m3"});
  require_same_run({"--kv-dtype", "fp8"}, {"--kv-cache-dtype", "fp8_e5m2"});
  require_same_run({"--weight-dtype", "fp8"}, {"--quantization", "fp8"});
  require_same_run({"--weight-dtype", "int4"}, {"--quantization", "awq"});
  require_same_run({"--weight-dtype", "int4"}, {"--quantization", "gptq_marlin"});
  require_same_run({"--max-num-seqs", "4"}, {"--max-num-seqs", "4"}, sharegpt_at_20);
  require_same_run({"--block-size", "64"}, {"--block-size", "64"});
}

TEST_CASE("vLLM's --max-num-batched-tokens is the token limit of whichever scheduler runs",
          "[cli][vllm]") {
  // vllm's limit may not be below max_len (vLLM V0's rule), so max_len is 1,024 here.
  const Args long_prompts = {"--prompt-tokens", "700", "--output-tokens", "20",
                             "--rate",          "40",  "--max-len",       "1024"};
  // vllm and orca: max_num_batched_tokens.
  require_same_run({"--max-batched-tokens", "1024"}, {"--max-num-batched-tokens", "1024"},
                   long_prompts);
  require_same_run({"--scheduler", "orca", "--max-batched-tokens", "1024"},
                   {"--scheduler", "orca", "--max-num-batched-tokens", "1024"}, long_prompts);
  // sarathi, vLLM's chunked prefill: its token budget.
  require_same_run({"--scheduler", "sarathi", "--token-budget", "256"},
                   {"--scheduler", "sarathi", "--max-num-batched-tokens", "256"}, long_prompts);
  require_same_run(
      {"--engine", "vllm-v0", "--scheduler", "sarathi", "--token-budget", "256"},
      {"--engine", "vllm-v0", "--enable-chunked-prefill", "--max-num-batched-tokens", "256"},
      long_prompts);
  // The default engine's vllm_v1 chunks already: its step budget.
  require_same_run({"--max-batched-tokens", "1024"},
                   {"--enable-chunked-prefill", "--max-num-batched-tokens", "1024"}, long_prompts);
  // A scheduler with no token limit refuses it by name, as it refuses --max-batched-tokens.
  test::require_error(
      run({"run", "--scheduler", "static", "--max-num-batched-tokens", "512"}), 3,
      "field \"scheduler.max_num_batched_tokens\": scheduler \"static\" does not read");
  // Given twice under two names.
  test::require_error(
      run({"run", "--max-batched-tokens", "512", "--max-num-batched-tokens", "512"}), 2,
      "--max-batched-tokens and --max-num-batched-tokens are the same setting");
  test::require_error(run({"run", "--token-budget", "512", "--max-num-batched-tokens", "512"}), 2,
                      "--token-budget and --max-num-batched-tokens are the same setting");
}

TEST_CASE("a sweep picks the token-limit key per point of a scheduler axis", "[cli][vllm]") {
  // vllm's limit may not be below max_len (vLLM V0's rule), so max_len is 512 here.
  const auto vllm_names = run({"sweep", "--grid", "scheduler=vllm,sarathi", "--num-requests", "60",
                               "--max-num-batched-tokens", "512", "--max-len", "512", "--json"});
  INFO(vllm_names.err);
  REQUIRE(vllm_names.exit_code == 0);
  const auto sarathi =
      summary_text({"--scheduler", "sarathi", "--token-budget", "512", "--max-len", "512"});
  const auto vllm =
      summary_text({"--scheduler", "vllm", "--max-batched-tokens", "512", "--max-len", "512"});
  auto rows = vllm_names.json()["points"];
  REQUIRE(rows.size() == 2);
  // A sweep's point adds its stability verdict to the run's summary.
  for (auto& row : rows)
    REQUIRE(row["summary"].erase("steady_state") == 1);
  CHECK(rows[0]["summary"] == nlohmann::json::parse(vllm));
  CHECK(rows[1]["summary"] == nlohmann::json::parse(sarathi));
}

TEST_CASE("a sweep axis may be a run flag that sets no single key (--acceptance-rate)",
          "[cli][vllm]") {
  const Args speculative = {"--speculative-config",
                            R"({"method": "ngram", "num_speculative_tokens": 3})"};
  const auto r =
      run(concat({"sweep", "--grid", "acceptance-rate=0.5,0.9", "--num-requests", "60", "--json"},
                 speculative));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto rows = r.json()["points"];
  REQUIRE(rows.size() == 2);
  for (auto& row : rows)
    REQUIRE(row["summary"].erase("steady_state") == 1);
  // Each point is the run with the flag at that value, and the two differ.
  CHECK(rows[0]["summary"] ==
        nlohmann::json::parse(summary_text(concat(speculative, {"--acceptance-rate", "0.5"}))));
  CHECK(rows[1]["summary"] ==
        nlohmann::json::parse(summary_text(concat(speculative, {"--acceptance-rate", "0.9"}))));
  CHECK(rows[0]["summary"] != rows[1]["summary"]);
}

TEST_CASE(
    "vLLM's --enable-chunked-prefill keeps a chunking scheduler or takes sarathi, and holds of a "
    "chosen one",
    "[cli][vllm]") {
  // An engine whose scheduler runs whole prompts (vllm-v0) switches to sarathi; the default
  // engine's vllm_v1 chunks already and stays.
  require_same_run({"--engine", "vllm-v0", "--scheduler", "sarathi"},
                   {"--engine", "vllm-v0", "--enable-chunked-prefill"}, {"--rate", "20"});
  CHECK(summary_text({"--enable-chunked-prefill"}) == summary_text({}));
  CHECK(summary_text({"--scheduler", "sarathi", "--enable-chunked-prefill"}) ==
        summary_text({"--scheduler", "sarathi"}));
  CHECK(summary_text({"--engine", "vllm-v0", "--no-enable-chunked-prefill"}) ==
        summary_text({"--engine", "vllm-v0"}));
  test::require_error(run({"run", "--no-enable-chunked-prefill"}), 3,
                      "--no-enable-chunked-prefill: scheduler \"vllm_v1\" chunks prompts");
  test::require_error(
      run({"run", "--enable-chunked-prefill", "--scheduler", "vllm"}), 3,
      "--enable-chunked-prefill: scheduler \"vllm\" runs whole prompts; the schedulers "
      "that chunk prompts are sarathi");
  test::require_error(run({"run", "--enable-chunked-prefill", "--set", "scheduler.name=orca"}), 3,
                      "--enable-chunked-prefill: scheduler \"orca\"");
  test::require_error(run({"run", "--no-enable-chunked-prefill", "--scheduler", "sarathi"}), 3,
                      "--no-enable-chunked-prefill: scheduler \"sarathi\" chunks prompts");
  test::require_error(run({"run", "--enable-chunked-prefill", "--no-enable-chunked-prefill"}), 2,
                      "same setting");
}

TEST_CASE("vLLM's --swap-space is memory.swap_space_gib", "[cli][vllm]") {
  // A small cache under a burst preempts; swap space too small for everyone falls back to
  // recompute, so its size changes the run.
  const Args tight = {"--kv-capacity-tokens", "6000", "--rate",       "inf",
                      "--scheduler",          "vllm", "--preemption", "swap"};
  require_same_run({"--set", "memory.swap_space_gib=0.02"}, {"--swap-space", "0.02"}, tight);
}

TEST_CASE("vLLM's --enable-prefix-caching is recorded and changes nothing yet", "[cli][vllm]") {
  CHECK(summary_text({"--enable-prefix-caching"}) == summary_text({}));
  CHECK(summary_text({"--no-enable-prefix-caching"}) == summary_text({}));
  test::ScratchDir dir("vllm_prefix_caching");
  for (const bool on : {true, false}) {
    const auto out = dir.path() / (on ? "on" : "off");
    const auto r = run({"run", "--num-requests", "10", "--no-plots", "--out", out.string(),
                        on ? "--enable-prefix-caching" : "--no-enable-prefix-caching"});
    REQUIRE(r.exit_code == 0);
    const auto resolved = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
    CHECK(resolved["engine"]["enable_prefix_caching"] == on);
  }
  test::require_error(run({"run", "--enable-prefix-caching", "--no-enable-prefix-caching"}), 2,
                      "same setting");
}

TEST_CASE("vLLM's names work in kv, sweep, capacity and compare", "[cli][vllm]") {
  const auto kv = [](const Args& flags) {
    const auto r =
        run(concat({"kv", "--model", "llama-3-70b", "--hw", "h100-sxm", "--json"}, flags));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(kv({"--tp", "4", "--pp", "2"}) ==
        kv({"--tensor-parallel-size", "4", "--pipeline-parallel-size", "2"}));
  CHECK(kv({"--tp", "4", "--mem-util", "0.8", "--max-len", "4096", "--max-batched-tokens",
            "2048"}) == kv({"--tp", "4", "--gpu-memory-utilization", "0.8", "--max-model-len",
                            "4096", "--max-num-batched-tokens", "2048"}));
  CHECK(kv({"--tp", "4", "--kv-dtype", "fp8", "--weight-dtype", "fp8"}) ==
        kv({"--tp", "4", "--kv-cache-dtype", "fp8_e4m3", "--quantization", "fp8"}));
  CHECK(kv({"--tp", "4", "--enable-prefix-caching"}) == kv({"--tp", "4"}));
  test::require_error(run({"kv", "--model", "llama-3-8b", "--hw", "h100-sxm", "--tp", "2",
                           "--tensor-parallel-size", "2"}),
                      2, "--tp and --tensor-parallel-size are the same setting");
  test::require_error(run({"kv", "--model", "llama-3-8b", "--kv-cache-dtype", "fp8_inc"}), 3,
                      "--kv-cache-dtype: \"fp8_inc\" has no servesim equivalent");

  const auto sweep = [](const Args& flags) {
    const auto r =
        run(concat({"sweep", "--grid", "rate=4,8", "--num-requests", "30", "--json"}, flags));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(sweep({"--tp", "2"}) == sweep({"--tensor-parallel-size", "2"}));
  const auto grid = [](const std::string& axis) {
    const auto r = run({"sweep", "--grid", axis, "--num-requests", "30", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.json()["points"][0]["summary"];
  };
  CHECK(grid("tensor-parallel-size=2") == grid("tp=2"));
  CHECK(grid("kv-cache-dtype=fp8_e5m2") == grid("kv-dtype=fp8"));
  CHECK(grid("quantization=awq") == grid("weight_dtype=int4"));

  const auto compare = [](const Args& flags) {
    const auto r = run(
        concat({"compare", "--policies", "vllm:paged,orca:paged", "--num-requests", "30"}, flags));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(compare({"--max-len", "1024"}) == compare({"--max-model-len", "1024"}));

  const auto capacity = [](const Args& flags) {
    const auto r = run(concat({"capacity", "--slo", "ttft_p99=0.5", "--num-requests", "40",
                               "--start-rate", "4", "--precision", "0.25", "--json"},
                              flags));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(capacity({"--kv-dtype", "fp8"}) == capacity({"--kv-cache-dtype", "fp8"}));
}

TEST_CASE("vLLM's value names outside servesim's are refused, naming the flag", "[cli][vllm]") {
  test::ScratchDir dir("vllm_bad_values");
  const auto out = dir.path() / "out";
  const auto save = dir.path() / "result.json";
  const Args writes = {"--out", out.string(), "--save-result", save.string()};
  test::require_error(
      run(concat({"run", "--kv-cache-dtype", "fp8_inc"}, writes)), 3,
      "--kv-cache-dtype: \"fp8_inc\" has no servesim equivalent (expected one of auto, "
      "float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2)");
  test::require_error(
      run(concat({"run", "--quantization", "bitsandbytes"}, writes)), 3,
      "--quantization: \"bitsandbytes\" has no servesim equivalent (expected one of "
      "fp8, fbgemm_fp8, awq, awq_marlin, gptq, gptq_marlin)");
  test::require_error(run(concat({"run", "--quantization", "gptq-marlin"}, writes)), 3,
                      "did you mean \"gptq_marlin\"?");
  test::require_error(
      run(concat({"run", "--goodput", "ttft=500"}, writes)), 3,
      "--goodput: \"ttft=500\": no ':' (expected KEY:VALUE pairs, KEY ttft, tpot or "
      "e2el, VALUE milliseconds > 0");
  test::require_error(run(concat({"run", "--goodput", "ttft:500", "latency:9"}, writes)), 3,
                      "--goodput: \"latency:9\": unknown metric \"latency\"");
  test::require_error(run(concat({"run", "--goodput", "tpot:-5"}, writes)), 3,
                      "--goodput: \"tpot:-5\": \"-5\" is not a number of milliseconds > 0");
  test::require_error(run(concat({"run", "--goodput", "ttft:5", "ttft:6"}, writes)), 3,
                      "given twice");
  test::require_error(run(concat({"run", "--goodput", "ttft:500", "--slo-ttft", "1"}, writes)), 2,
                      "--slo-ttft and --goodput ttft:... are the same setting");
  test::require_error(run(concat({"run", "--metric-percentiles", "99,abc"}, writes)), 3,
                      "--metric-percentiles: \"abc\" is not a percentile in [0, 100]");
  test::require_error(run(concat({"run", "--metric-percentiles", "101"}, writes)), 3,
                      "--metric-percentiles: \"101\"");
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(save));
}

TEST_CASE("a misspelt flag or name gets \"did you mean\"", "[cli][vllm]") {
  test::require_error(run({"run", "--tensor-paralel-size", "2"}), 2,
                      "unrecognised option '--tensor-paralel-size'; did you mean "
                      "--tensor-parallel-size? (see servesim run --help)");
  test::require_error(run({"kv", "--model", "llama-3-8b", "--max-modle-len", "2"}), 2,
                      "did you mean --max-model-len?");
  test::require_error(run({"sweep", "--grid", "rate=1", "--gpu-memory-utilisation=0.5"}), 2,
                      "did you mean --gpu-memory-utilization?");
  test::require_error(run({"run", "--scheduler", "sarath"}), 3,
                      "unknown scheduler \"sarath\" (valid: vllm, orca, static, sarathi, vllm_v1, "
                      "sglang); did you mean "
                      "\"sarathi\"?");
  test::require_error(run({"run", "--allocator", "pagd"}), 3, "did you mean \"paged\"?");
  test::require_error(run({"run", "--router", "least-kv"}), 3, "did you mean \"least_kv\"?");
  test::require_error(run({"run", "--model", "llama3-8b"}), 3, "did you mean \"llama-3-8b\"?");
  test::require_error(run({"run", "--hw", "h100"}), 3,
                      "did you mean \"h100-nvl\", \"h100-pcie\" or \"h100-sxm\"?");
  test::require_error(run({"run", "--workload", "sharegtp"}), 3, "did you mean \"sharegpt\"?");
  // Nothing close: the list alone.
  const auto far = run({"run", "--scheduler", "fifo"});
  CHECK_THAT(far.err, Contains("(valid: vllm, orca, static, sarathi, vllm_v1, sglang)") &&
                          !Contains("did you"));
}

TEST_CASE("run --save-result holds vLLM's keys and agrees with summary.json to the last digit",
          "[cli][vllm]") {
  test::ScratchDir dir("vllm_save_result");
  const auto out = dir.path() / "out";
  const auto save = dir.path() / "result.json";
  const auto r = run({"run", "--num-requests", "200", "--rate", "12", "--no-plots",
                      "--requests-jsonl", "--out", out.string(), "--save-result", save.string(),
                      "--goodput", "ttft:40", "tpot:7", "--percentile-metrics",
                      "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,95,99,99.9"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto s = nlohmann::json::parse(test::read_file(out / "summary.json"));
  const auto v = nlohmann::json::parse(test::read_file(save));

  CHECK(v["duration"].get<double>() == s["duration_s"].get<double>());
  CHECK(v["completed"] == s["requests_completed"]);
  CHECK(v["failed"] == s["requests_rejected"]);
  CHECK(v["request_throughput"].get<double>() == s["throughput_requests_per_s"].get<double>());
  CHECK(v["output_throughput"].get<double>() == s["throughput_output_tokens_per_s"].get<double>());
  CHECK(v["total_token_throughput"].get<double>() ==
        s["throughput_total_tokens_per_s"].get<double>());
  const double duration = s["duration_s"];
  CHECK(v["total_output_tokens"].get<double>() / duration ==
        Approx(s["throughput_output_tokens_per_s"].get<double>()).epsilon(1e-12));
  CHECK((v["total_input_tokens"].get<double>() + v["total_output_tokens"].get<double>()) /
            duration ==
        Approx(s["throughput_total_tokens_per_s"].get<double>()).epsilon(1e-12));
  // --goodput's targets are servesim's SLO: good requests = attainment x completed.
  const double good = v["request_goodput"].get<double>() * duration;
  CHECK(good == Approx(s["slo_attainment"].get<double>() * s["requests_completed"].get<double>())
                    .epsilon(1e-9));
  CHECK(std::abs(good - std::round(good)) < 1e-6);
  CHECK(s["slo_attainment"].get<double>() > 0.05);
  CHECK(s["slo_attainment"].get<double>() < 0.95);

  for (const auto& [vllm, ours] : std::map<std::string, std::string>{
           {"ttft", "ttft_s"}, {"tpot", "tpot_s"}, {"itl", "itl_s"}, {"e2el", "e2e_s"}}) {
    INFO(vllm);
    const auto ms = [&](const char* stat) { return s[ours][stat].get<double>() * 1000; };
    CHECK(v["mean_" + vllm + "_ms"].get<double>() == ms("mean"));
    CHECK(v["median_" + vllm + "_ms"].get<double>() == ms("p50"));
    CHECK(v["p50_" + vllm + "_ms"].get<double>() == ms("p50"));
    CHECK(v["p90_" + vllm + "_ms"].get<double>() == ms("p90"));
    CHECK(v["p99_" + vllm + "_ms"].get<double>() == ms("p99"));
    const double p95 = v["p95_" + vllm + "_ms"];
    const double p999 = v["p99.9_" + vllm + "_ms"];
    CHECK(ms("p90") <= p95);
    CHECK(p95 <= ms("p99"));
    CHECK(ms("p99") <= p999);
    CHECK(p999 <= ms("max") * (1 + 1e-12));
    CHECK(v["std_" + vllm + "_ms"].get<double>() > 0);
  }
  // The standard deviations are exact: recompute TTFT's from requests.jsonl (9 digits).
  std::ifstream lines(out / "requests.jsonl");
  std::vector<double> ttft;
  for (std::string line; std::getline(lines, line);) {
    const auto request = nlohmann::json::parse(line);
    if (request["rejected"] == 0) ttft.push_back(request["ttft_s"]);
  }
  REQUIRE(ttft.size() == s["requests_completed"].get<std::size_t>());
  double mean = 0, squares = 0;
  for (double t : ttft)
    mean += t / static_cast<double>(ttft.size());
  for (double t : ttft)
    squares += (t - mean) * (t - mean);
  CHECK(v["std_ttft_ms"].get<double>() ==
        Approx(std::sqrt(squares / static_cast<double>(ttft.size())) * 1000).epsilon(1e-6));
  CHECK(v["backend"] == "servesim");
  CHECK(v["model_id"] == "llama-3-8b");
  CHECK(v["num_prompts"] == 200);
  CHECK(v["request_rate"] == 12.0);
  CHECK(v["burstiness"] == 1.0);

  // Without an SLO, request_goodput is null, as in vLLM's file.
  const auto plain = dir.path() / "plain.json";
  REQUIRE(run({"run", "--num-requests", "20", "--save-result", plain.string()}).exit_code == 0);
  const auto p = nlohmann::json::parse(test::read_file(plain));
  CHECK(p["request_goodput"].is_null());
  // vLLM's defaults: --percentile-metrics ttft,tpot,itl and --metric-percentiles 99.
  for (const char* metric : {"ttft", "tpot", "itl"}) {
    const std::string m = metric;
    CHECK(p.contains("mean_" + m + "_ms"));
    CHECK(p.contains("median_" + m + "_ms"));
    CHECK(p.contains("std_" + m + "_ms"));
    CHECK(p.contains("p99_" + m + "_ms"));
    CHECK_FALSE(p.contains("p90_" + m + "_ms"));
    CHECK_FALSE(p.contains("p95_" + m + "_ms"));
  }
  CHECK_FALSE(p.contains("mean_e2el_ms"));
  CHECK_FALSE(p.contains("p99_e2el_ms"));
}

TEST_CASE("vLLM's --goodput sets the same SLO as --slo-ttft, --slo-tpot and --slo-e2e",
          "[cli][vllm]") {
  CHECK(summary_text({"--goodput", "ttft:40", "tpot:11", "e2el:3000"}) ==
        summary_text({"--slo-ttft", "0.04", "--slo-tpot", "0.011", "--slo-e2e", "3"}));
  const auto summary = nlohmann::json::parse(summary_text({"--goodput", "e2el:3000"}));
  CHECK(summary["slo_attainment"].get<double>() > 0);
  CHECK(summary["slo_attainment"].get<double>() < 1);
}

TEST_CASE("run --workload FILE replays an Azure, a plain or a Mooncake trace, told by content",
          "[cli][vllm]") {
  const auto data = test::source_dir() / "tests" / "workload" / "data";
  for (const auto& [file, rows] : std::map<std::string, int>{
           {"azure_trace.csv", 4}, {"plain_trace.csv", 5}, {"mooncake_trace.jsonl", 4}}) {
    INFO(file);
    const auto r = run({"run", "--workload", (data / file).string(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.json()["requests_completed"] == rows);
  }
  test::ScratchDir dir("vllm_workload_file");
  const auto out = dir.path() / "out";
  test::require_error(
      run({"run", "--workload", (data / "unknown_trace.csv").string(), "--out", out.string()}), 3,
      "unknown_trace.csv:1: not a workload: expected a JSON workload spec");
  CHECK_FALSE(std::filesystem::exists(out));

  // Mooncake's published conversation trace, its first 300 requests.
  const auto shared_mooncake = test::shared_data_path("traces/mooncake/conversation_trace.jsonl");
  if (!shared_mooncake) return;
  const std::filesystem::path mooncake = *shared_mooncake;
  // A model of 131,072 positions: --max-len may not pass them.
  const auto r = run({"run", "--workload", mooncake.string(), "--num-requests", "300", "--model",
                      "qwen2-72b", "--tp", "8", "--max-len", "131072", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["requests_completed"].get<int>() + r.json()["requests_rejected"].get<int>() ==
        300);
}
