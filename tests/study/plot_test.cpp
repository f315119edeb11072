#include <algorithm>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/study/plot_title.h"
#include "sim/study/run_plots.h"
#include "sim/study/sweep_plots.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

// A rate sweep of one policy whose P99 TTFT goes from 10 ms to `ttft_high_ms`; the other
// panels stay within 2x.
SweepResult rate_sweep(double ttft_high_ms) {
  SweepResult sweep;
  sweep.axes = {"rate"};
  const double rates[] = {1, 2, 4};
  const double ttft_ms[] = {10, 20, ttft_high_ms};
  for (int i = 0; i < 3; ++i) {
    SweepRow row;
    row.labels = {std::to_string(static_cast<int>(rates[i]))};
    row.values = nlohmann::json::array({rates[i]});
    row.summary = {{"throughput_requests_per_s", rates[i] * 0.9},
                   {"normalized_latency_s_per_token", 0.010 + 0.002 * i},
                   {"ttft_s", {{"p99", ttft_ms[i] / 1e3}}},
                   {"tpot_s", {{"p99", 0.005 + 0.001 * i}}}};
    sweep.rows.push_back(std::move(row));
  }
  return sweep;
}

}  // namespace

TEST_CASE("a panel spanning more than 30x gets a log y axis", "[study][plot]") {
  CHECK(spans_log_range({1.0, 31.0}));
  CHECK_FALSE(spans_log_range({1.0, 29.0}));
  CHECK_FALSE(spans_log_range({0.0, 2.0, 50.0}));  // zeros are not on a log axis
  CHECK_FALSE(spans_log_range({}));
}

TEST_CASE("sweep curves use a log y axis only where a curve spans over 30x", "[study][plot]") {
  test::ScratchDir dir("curve_log");
  CurveOptions options;
  options.title = "model llama-3-8b, hardware h100-sxm (TP 1), engine vllm, workload sharegpt";
  SECTION("TTFT from 10 ms to 1 s: its panel alone is log-scaled") {
    REQUIRE(write_curve_figure(rate_sweep(1000), dir.path(), options));
    const std::string script = read_text(dir.path() / "latency_throughput.gp");
    // One terminal (SVG, the default format) with the one log panel.
    CHECK(count_of(script, "\nset terminal") == 1);
    CHECK(count_of(script, "\nset logscale y") == 1);
    CHECK(count_of(script, "unset logscale y") == 2);
    CHECK_THAT(script, Contains(gnuplot_quote(options.title)));
    CHECK_THAT(script, Contains("set key at screen") && Contains("center bottom"));
    CHECK_THAT(script, Contains("font \"sans,15\""));
    CHECK_THAT(script, Contains("throughput (requests/s)") && Contains("using 2:4"));
  }
  SECTION("TTFT from 10 ms to 250 ms: no log axis, unless forced") {
    REQUIRE(write_curve_figure(rate_sweep(250), dir.path(), options));
    const std::string linear = read_text(dir.path() / "latency_throughput.gp");
    CHECK(count_of(linear, "\nset logscale y") == 0);
    options.force_log_y = true;
    REQUIRE(write_curve_figure(rate_sweep(250), dir.path(), options));
    CHECK(count_of(read_text(dir.path() / "latency_throughput.gp"), "\nset logscale y") == 3);
  }
  SECTION("against the offered rate") {
    options.x = parse_curve_x("offered_rate", "--x");
    REQUIRE(write_curve_figure(rate_sweep(250), dir.path(), options));
    const std::string script = read_text(dir.path() / "latency_throughput.gp");
    CHECK_THAT(script, Contains("offered rate (requests/s)") && Contains("using 1:4"));
    CHECK_THAT(read_text(dir.path() / "curves.dat"), Contains("\n4 3.6 "));
  }
  CHECK_THROWS_AS(parse_curve_x("rate", "--x"), InputError);
  CHECK_THROWS_WITH(parse_curve_x("rate", "--x"), Contains("--x") && Contains("offered_rate"));
}

TEST_CASE("a study's title names the model, hardware, engine and workload held fixed",
          "[study][plot]") {
  const nlohmann::json document = {{"model", "models/opt-13b/config.json"},
                                   {"hardware", "a100-40gb"},
                                   {"tp", 2},
                                   {"engine", {{"name", "sglang"}}}};
  ConfigSources sources;
  sources.overrides.push_back({"--workload", "workload=\"azure-conv-2023\""});
  CHECK(plot_title(document, sources) ==
        "model opt-13b, hardware a100-40gb (TP 2), engine sglang, workload azure-conv-2023");
  // What an axis varies is the legend's to name.
  CHECK(plot_title(document, sources, {"tp", "engine"}) ==
        "model opt-13b, hardware a100-40gb, workload azure-conv-2023");
  // The hardware an axis, the TP every point runs at is still a fixed setting.
  CHECK(plot_title(document, ConfigSources{}, {"hw", "model"}) ==
        "TP 2, engine sglang, workload sharegpt");
  CHECK(plot_title(document, ConfigSources{}, {"hw", "tensor-parallel-size"}) ==
        "model opt-13b, engine sglang, workload sharegpt");
}

namespace {

// An iterations.csv with the columns the run plots read; `cached` adds the prefix-cache
// columns (a file from before prefix caching has none).
void write_iterations(const std::filesystem::path& path, bool cached) {
  std::ofstream out(path);
  out << "replica,start_s,duration_s,batch_size,prefill_tokens,kv_capacity_tokens,"
         "kv_token_states,kv_reserved,kv_internal_fragmentation,kv_external_fragmentation,"
         "kv_free"
      << (cached ? ",kv_cached,cached_tokens" : "") << "\n";
  // One iteration computing 100 prompt tokens after a hit of 300, then one decode.
  out << "0,0,1,1,100,1000,400,0,0,0,400" << (cached ? ",200,300" : "") << "\n";
  out << "0,1,1,1,0,1000,401,0,0,0,399" << (cached ? ",200,0" : "") << "\n";
}

}  // namespace

TEST_CASE("run plots draw the prefix-cache hit rate over time when anything hit", "[study]") {
  servesim::test::ScratchDir dir("run_plots_prefix");
  write_iterations(dir.path() / "iterations.csv", true);
  std::vector<std::string> names;
  for (const Figure& figure : write_run_figures(dir.path()))
    names.push_back(figure.name);
  CHECK(std::find(names.begin(), names.end(), "prefix_cache_hit_rate") != names.end());
  const std::string timeline = read_text(dir.path() / "timeline.dat");
  // The first bin: cumulative shares up to 100 with cached, then 300 / (300 + 100) hit.
  CHECK_THAT(timeline, Contains(" 80 100 75\n"));
  CHECK_THAT(read_text(dir.path() / "kv_memory.gp"), Contains("title \"cached\""));

  servesim::test::ScratchDir old("run_plots_no_prefix");
  write_iterations(old.path() / "iterations.csv", false);
  names.clear();
  for (const Figure& figure : write_run_figures(old.path()))
    names.push_back(figure.name);
  CHECK(std::find(names.begin(), names.end(), "prefix_cache_hit_rate") == names.end());
  CHECK(std::find(names.begin(), names.end(), "kv_memory") != names.end());
}
