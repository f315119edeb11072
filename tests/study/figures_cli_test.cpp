// The figures of run, compare and plot: what is drawn, in which formats, and without gnuplot.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/study/study_cli_support.h"
#include "tests/support/test_support.h"

using servesim::test::gnuplot_installed;
using servesim::test::lines_of;
using servesim::test::PathOverride;
using servesim::test::read_file;
using servesim::test::run_servesim;

TEST_CASE("run --out and plot draw labelled SVG figures, and no PNG unless asked", "[study][cli]") {
  if (!gnuplot_installed()) {
    WARN("gnuplot is not installed: skipping the rendering check");
    return;
  }
  servesim::test::ScratchDir dir("plots");
  const auto out = dir.path() / "run";
  REQUIRE(run_servesim({"run", "--num-requests", "200", "--out", out.string()}).exit_code == 0);
  for (const char* figure : {"latency_cdf", "kv_memory", "batch_size"}) {
    INFO(figure);
    CHECK_THAT(read_file(out / (std::string(figure) + ".svg")), Catch::Contains("<svg"));
    CHECK_FALSE(std::filesystem::exists(out / (std::string(figure) + ".png")));
  }
  const std::string cdf = read_file(out / "latency_cdf.svg");
  CHECK_THAT(cdf, Catch::Contains("TTFT (ms)") && Catch::Contains("TPOT (ms)"));
  CHECK_THAT(read_file(out / "kv_memory.svg"),
             Catch::Contains("share of KV capacity (%)") && Catch::Contains("token states"));

  std::filesystem::remove(out / "latency_cdf.svg");
  const auto plotted = run_servesim({"plot", out.string()});
  REQUIRE(plotted.exit_code == 0);
  CHECK(std::filesystem::exists(out / "latency_cdf.svg"));
  CHECK_THAT(plotted.out, Catch::Contains("kv_memory.svg"));
}

TEST_CASE("Without gnuplot the data and scripts are written with a warning", "[study][cli]") {
  servesim::test::ScratchDir dir("no_gnuplot");
  const auto out = dir.path() / "run";
  std::optional<servesim::test::CliResult> ran;
  {
    const PathOverride no_gnuplot(dir.path().string());
    ran = run_servesim({"run", "--num-requests", "50", "--out", out.string()});
  }
  const auto& result = *ran;
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.err, Catch::Contains("gnuplot not found") && Catch::Contains("gnuplot-nox"));
  CHECK(std::filesystem::exists(out / "kv_memory.gp"));
  CHECK(std::filesystem::exists(out / "timeline.dat"));
  CHECK_FALSE(std::filesystem::exists(out / "kv_memory.svg"));
}

TEST_CASE("plot refuses a folder that is not servesim output", "[study][cli]") {
  servesim::test::ScratchDir dir("plot_bad");
  const auto missing = run_servesim({"plot", (dir.path() / "nope").string()});
  CHECK(missing.exit_code == 3);
  CHECK_THAT(missing.err, Catch::Contains("nope") && Catch::Contains("not a directory"));
  const auto empty = run_servesim({"plot", dir.path().string()});
  CHECK(empty.exit_code == 3);
  CHECK_THAT(empty.err, Catch::Contains("no summary.json"));
}

namespace {

std::vector<std::string> small_compare(const std::filesystem::path& out,
                                       std::vector<std::string> extra) {
  std::vector<std::string> args{"compare",
                                "--policies",
                                "vllm:paged:16,orca:contiguous:max",
                                "--num-requests",
                                "60",
                                "--rate",
                                "10",
                                "--out",
                                out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The rows of kv_breakdown.dat: the policy label and its five shares (%).
std::vector<std::pair<std::string, std::vector<double>>> kv_breakdown_rows(
    const std::filesystem::path& path) {
  std::vector<std::pair<std::string, std::vector<double>>> rows;
  for (const auto& line : lines_of(read_file(path))) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    int index = 0;
    std::string label;
    in >> index >> label;
    std::vector<double> shares;
    for (double share = 0; in >> share;)
      shares.push_back(share);
    rows.emplace_back(label, shares);
  }
  return rows;
}

}  // namespace

TEST_CASE("compare draws the KV breakdown per policy and mean latencies", "[study][cli]") {
  servesim::test::ScratchDir dir("compare_plots");
  SECTION("without gnuplot: the data and scripts, with a warning") {
    const auto out = dir.path() / "no_gnuplot";
    std::optional<servesim::test::CliResult> ran;
    {
      const PathOverride no_gnuplot(dir.path().string());
      ran = run_servesim(small_compare(out, {}));
    }
    INFO(ran->err);
    REQUIRE(ran->exit_code == 0);
    CHECK_THAT(ran->err, Catch::Contains("gnuplot not found"));
    for (const char* name : {"kv_breakdown", "latency_bars"}) {
      INFO(name);
      CHECK(std::filesystem::exists(out / (std::string(name) + ".gp")));
      CHECK(std::filesystem::exists(out / (std::string(name) + ".dat")));
      CHECK_FALSE(std::filesystem::exists(out / (std::string(name) + ".svg")));
    }
    const std::string script = read_file(out / "kv_breakdown.gp");
    CHECK_THAT(script, Catch::Contains("rowstacked") && Catch::Contains("external fragmentation") &&
                           Catch::Contains("model llama-3-8b") &&
                           Catch::Contains("workload sharegpt"));
    // One bar per policy, in the order given, whose shares of KV memory sum to 100.
    const auto rows = kv_breakdown_rows(out / "kv_breakdown.dat");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].first == "\"vllm:paged:16\"");
    CHECK(rows[1].first == "\"orca:contiguous:max\"");
    for (const auto& [label, shares] : rows) {
      INFO(label);
      REQUIRE(shares.size() == 6);  // the five categories and cached
      double total = 0;
      for (const double share : shares)
        total += share;
      CHECK(total == Approx(100).margin(1e-6));
    }
    // Max reservations hold more memory reserved than paging does.
    CHECK(rows[1].second[1] > rows[0].second[1]);
  }
  SECTION("--no-plots writes none, --json prints every policy's summary") {
    const auto out = dir.path() / "no_plots";
    const auto result = run_servesim(small_compare(out, {"--no-plots", "--json"}));
    REQUIRE(result.exit_code == 0);
    for (const char* name : {"kv_breakdown.gp", "kv_breakdown.dat", "kv_breakdown.svg",
                             "latency_bars.gp", "latency_bars.svg"}) {
      CHECK_FALSE(std::filesystem::exists(out / name));
    }
    CHECK(std::filesystem::exists(out / "compare.csv"));
    const auto document = nlohmann::json::parse(result.out);
    CHECK(document["vllm:paged:16"]["requests_completed"] == 60);
    CHECK(document.contains("orca:contiguous:max"));
  }
  SECTION("with gnuplot: PNG and SVG files when asked") {
    if (!gnuplot_installed()) {
      WARN("gnuplot is not installed: skipping the rendering check");
      return;
    }
    const auto out = dir.path() / "rendered";
    const auto result = run_servesim(small_compare(out, {"--plot-format", "png,svg"}));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    for (const char* name : {"kv_breakdown", "latency_bars"}) {
      INFO(name);
      const std::string png = read_file(out / (std::string(name) + ".png"));
      REQUIRE(png.size() > 1000);
      CHECK(png.substr(1, 3) == "PNG");
      CHECK_THAT(read_file(out / (std::string(name) + ".svg")), Catch::Contains("<svg"));
    }
    CHECK_THAT(read_file(out / "kv_breakdown.svg"), Catch::Contains("KV token states"));
    std::filesystem::remove(out / "kv_breakdown.png");
    const auto plotted = run_servesim({"plot", out.string()});
    REQUIRE(plotted.exit_code == 0);
    CHECK(std::filesystem::exists(out / "kv_breakdown.png"));
  }
}
