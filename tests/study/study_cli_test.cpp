#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <catch2/catch.hpp>

#include "sim/study/same_schedule.h"
#include "tests/support/test_support.h"

namespace {

using servesim::test::run_servesim;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// A small sharegpt run, quick enough to sweep.
std::vector<std::string> small_sweep(std::vector<std::string> extra) {
  std::vector<std::string> args{"sweep", "--num-requests", "300", "--seed", "7"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Sets PATH for the life of the object, so that later tests in the same process see the old one.
class PathOverride {
 public:
  explicit PathOverride(const std::string& path) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", path.c_str(), 1);
  }
  ~PathOverride() {
    if (old_) ::setenv("PATH", old_->c_str(), 1);
  }
  PathOverride(const PathOverride&) = delete;
  PathOverride& operator=(const PathOverride&) = delete;

 private:
  std::optional<std::string> old_;
};

bool gnuplot_installed() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

}  // namespace

TEST_CASE("sweep writes one CSV row per grid point with every key and metric", "[study][cli]") {
  servesim::test::ScratchDir dir("sweep_csv");
  const auto out = dir.path() / "out";
  const auto result =
      run_servesim(small_sweep({"--grid", "rate=2,8", "--grid", "scheduler=vllm,sarathi", "--out",
                                out.string(), "--no-plots"}));
  REQUIRE(result.exit_code == 0);
  const auto lines = lines_of(read_file(out / "sweep.csv"));
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("point,rate,scheduler,", 0) == 0);
  CHECK_THAT(lines[0], Catch::Contains("ttft_s.p99") && Catch::Contains("kv_memory.free"));
  CHECK(lines[1].rfind("0,2,vllm,", 0) == 0);
  CHECK(lines[4].rfind("3,8,sarathi,", 0) == 0);
  const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
  CHECK(summary["command"] == "sweep");
  REQUIRE(summary["points"].size() == 4);
  CHECK(summary["points"][3]["values"]["scheduler"] == "sarathi");
  CHECK(summary["points"][3]["summary"]["requests_completed"] == 300);
  // The console table carries ITL percentiles, in ms with two decimals.
  CHECK_THAT(result.out, Catch::Contains("ITL p50 ms") && Catch::Contains("ITL p99 ms"));
  std::array<char, 32> itl_p99{};
  std::snprintf(itl_p99.data(), itl_p99.size(), "%.2f",
                summary["points"][3]["summary"]["itl_s"]["p99"].get<double>() * 1e3);
  const auto table = lines_of(result.out);
  const auto row = std::find_if(table.begin(), table.end(),
                                [](const std::string& line) { return line.rfind("3 ", 0) == 0; });
  REQUIRE(row != table.end());
  CHECK_THAT(*row, Catch::Contains(itl_p99.data()));
  // A rate axis gives each policy its latency/throughput curve.
  CHECK(std::filesystem::exists(out / "curves.dat"));
  CHECK_THAT(read_file(out / "latency_throughput.gp"),
             Catch::Contains("\"vllm\"") && Catch::Contains("throughput (requests/s)"));
}

TEST_CASE("sweep results do not depend on the number of threads", "[study][cli]") {
  servesim::test::ScratchDir dir("sweep_jobs");
  const auto args =
      small_sweep({"--grid", "rate=2,4,8", "--grid", "block-size=16,32", "--no-plots", "--out"});
  auto serial = args, parallel = args;
  serial.push_back((dir.path() / "serial").string());
  parallel.push_back((dir.path() / "parallel").string());
  parallel.insert(parallel.end(), {"-j", "3"});
  REQUIRE(run_servesim(serial).exit_code == 0);
  REQUIRE(run_servesim(parallel).exit_code == 0);
  for (const char* file : {"sweep.csv", "summary.json", "curves.dat"}) {
    CHECK(read_file(dir.path() / "serial" / file) == read_file(dir.path() / "parallel" / file));
  }
}

TEST_CASE("On a fixed seed latency does not fall as the rate rises", "[study][cli]") {
  const auto result =
      run_servesim({"sweep", "--grid", "rate=1,2,4,8,16,32", "--num-requests", "600", "--json"});
  REQUIRE(result.exit_code == 0);
  const auto points = result.json()["points"];
  REQUIRE(points.size() == 6);
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& before = points[i - 1]["summary"];
    const auto& after = points[i]["summary"];
    INFO("rate " << points[i]["values"]["rate"]);
    CHECK(after["normalized_latency_s_per_token"].get<double>() >=
          before["normalized_latency_s_per_token"].get<double>());
    CHECK(after["e2e_s"]["mean"].get<double>() >= before["e2e_s"]["mean"].get<double>());
    CHECK(after["tpot_s"]["mean"].get<double>() >= before["tpot_s"]["mean"].get<double>());
    // At light load TTFT depends on which iteration a prompt lands in as much as on queueing,
    // so it may dip by a fraction of an iteration; it never falls by more.
    CHECK(after["ttft_s"]["mean"].get<double>() >= 0.98 * before["ttft_s"]["mean"].get<double>());
  }
}

TEST_CASE("sweep refuses an empty grid and names an unknown key", "[study][cli]") {
  const auto empty = run_servesim({"sweep"});
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.err, Catch::Contains("grid is empty"));
  const auto unknown = run_servesim(small_sweep({"--grid", "schedular.name=vllm,orca"}));
  CHECK(unknown.exit_code == 3);
  CHECK_THAT(unknown.err,
             Catch::Contains("grid point 0 (schedular.name=vllm)") && Catch::Contains("schedular"));
  const auto bad_value = run_servesim(small_sweep({"--grid", "scheduler=vllm,fifo"}));
  CHECK(bad_value.exit_code == 3);
  CHECK_THAT(bad_value.err, Catch::Contains("grid point 1") && Catch::Contains("fifo"));
}

// M/D/1: one replica serving one request at a time, every request the same prompt and a
// single output token, so each takes the same service time D; with Poisson arrivals at rate
// R the mean TTFT is D + R D^2 / (2 (1 - R D)). A mean TTFT limit of 1.5 D is met up to
// R = 0.5 / D.
TEST_CASE("capacity finds the M/D/1 rate within its precision", "[study][cli]") {
  // One server of deterministic service: no frontend latency outside it.
  const std::vector<std::string> md1{"--scheduler",     "static",
                                     "--batch-size",    "1",
                                     "--prompt-tokens", "512",
                                     "--output-tokens", "1",
                                     "--set",           "engine.host.frontend_latency_s=0"};
  auto single = md1;
  single.insert(single.begin(), "run");
  single.insert(single.end(), {"--rate", "inf", "--num-requests", "1", "--json"});
  const auto one = run_servesim(single);
  REQUIRE(one.exit_code == 0);
  const double service_s = one.json()["ttft_s"]["mean"].get<double>();
  REQUIRE(service_s > 0);
  const double analytic_rate = 0.5 / service_s;

  auto search = md1;
  search.insert(search.begin(), "capacity");
  search.insert(search.end(),
                {"--rate", "1", "--num-requests", "40000", "--precision", "0.02", "--slo",
                 "ttft_mean=" + std::to_string(1.5 * service_s), "--json", "-j", "2"});
  const auto result = run_servesim(search);
  REQUIRE(result.exit_code == 0);
  const auto document = result.json();
  REQUIRE(document["outcome"] == "found");
  const double found = document["rate_per_s"].get<double>();
  const double failing = document["failing_rate_per_s"].get<double>();
  INFO("service " << service_s << " s, analytic " << analytic_rate << " req/s, found " << found);
  CHECK((failing - found) / found <= 0.02);
  // The bracket [found, failing] holds the analytic rate, to the precision plus the sampling
  // noise of 40,000 requests (about 1%).
  CHECK(found <= analytic_rate * 1.03);
  CHECK(failing >= analytic_rate * 0.97);
  CHECK(document["points"].size() >= 4);
}

TEST_CASE("capacity says when no rate or every rate meets the SLO", "[study][cli]") {
  // Short requests, so that 200 of them reach a steady state at every rate tried.
  const std::vector<std::string> base{"capacity", "--num-requests",  "200", "--rate",
                                      "4",        "--prompt-tokens", "128", "--output-tokens",
                                      "16"};
  auto never = base;
  never.insert(never.end(), {"--slo", "ttft_p50=0.000001", "--min-rate", "0.5"});
  const auto none = run_servesim(never);
  CHECK(none.exit_code == 4);
  // One request alone already misses it: said before any search (search_test.cpp tests the
  // closest point of a search that finds no rate).
  CHECK_THAT(none.err, Catch::Contains("unreachable: TTFT p50 of a request alone is"));
  auto always = base;
  always.insert(always.end(), {"--slo", "ttft_p99=1000", "--max-rate", "20"});
  const auto every = run_servesim(always);
  CHECK(every.exit_code == 0);
  CHECK_THAT(every.out, Catch::Contains("met at every rate tried, up to 20 "));  // not past it
  CHECK(run_servesim({"capacity"}).exit_code == 2);                              // no SLO
}

TEST_CASE("capacity finds the fewest replicas and prices them", "[study][cli]") {
  const auto result =
      run_servesim({"capacity", "--target-rate", "24", "--num-requests", "1500", "--shapes",
                    "h100-sxm:1@3.1,a100-80gb:1", "--slo", "ttft_p99=2", "--gpu-cost-per-hour",
                    "2.5", "--json", "--max-replicas", "16"});
  REQUIRE(result.exit_code == 0);
  const auto document = result.json();
  REQUIRE(document["shapes"].size() == 2);
  for (const auto& shape : document["shapes"]) {
    INFO(shape["hardware"]);
    REQUIRE(shape["replicas"].is_number());
    const auto replicas = shape["replicas"].get<std::int64_t>();
    bool fewer_failed = replicas == 1;
    for (const auto& point : shape["points"]) {
      const auto n = point["replicas"].get<std::int64_t>();
      CHECK(point["verdict"]["met"].get<bool>() == (n >= replicas));
      if (n == replicas - 1) fewer_failed = !point["verdict"]["met"].get<bool>();
    }
    CHECK(fewer_failed);
    CHECK(shape["gpus"] == replicas);
    // The shape's own price (h100-sxm:1@3.1) over --gpu-cost-per-hour.
    const double price = shape["hardware"] == "h100-sxm" ? 3.1 : 2.5;
    CHECK(shape["usd_per_gpu_hour"].get<double>() == price);
    CHECK(shape["usd_per_hour"].get<double>() == Approx(price * static_cast<double>(replicas)));
    CHECK(shape["usd_per_million_output_tokens"].get<double>() > 0);
  }
  // A slower GPU never needs fewer replicas.
  CHECK(document["shapes"][1]["replicas"] >= document["shapes"][0]["replicas"]);
}

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

TEST_CASE("a grid point that does not fit is a row saying why, and the sweep goes on",
          "[study][cli]") {
  servesim::test::ScratchDir dir("sweep_unfit");
  const auto out = dir.path() / "out";
  // Llama-3-70B's 131 GiB of bf16 weights do not fit one H100.
  const auto result = run_servesim({"sweep", "--model", "llama-3-70b", "--grid", "tp=1,4",
                                    "--num-requests", "50", "--out", out.string(), "--no-plots"});
  REQUIRE(result.exit_code == 0);
  const auto table = lines_of(result.out);
  REQUIRE(table.size() >= 4);
  CHECK_THAT(table[2], Catch::Contains("does not fit: meta-llama/Meta-Llama-3-70B does not fit on "
                                       "H100-SXM at TP 1"));
  CHECK_THAT(table[3], !Catch::Contains("does not fit"));
  const auto csv = lines_of(read_file(out / "sweep.csv"));
  REQUIRE(csv.size() == 3);
  CHECK(csv[0].substr(csv[0].size() - 13) == ",does_not_fit");
  CHECK(csv[1].rfind("0,1,,", 0) == 0);  // no metrics
  CHECK_THAT(csv[1], Catch::Contains("does not fit on H100-SXM"));
  CHECK(csv[2].back() == ',');  // it fits: an empty reason
  const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
  CHECK(summary["points"][0]["summary"].contains("does_not_fit"));
  CHECK(summary["points"][1]["summary"]["requests_completed"] == 50);

  // When no point fits there is nothing to report: exit 4 and no output folder.
  const auto none =
      run_servesim({"sweep", "--model", "llama-3-70b", "--grid", "hw=h100-sxm,a100-80gb",
                    "--num-requests", "50", "--out", (dir.path() / "none").string()});
  CHECK(none.exit_code == 4);
  CHECK_THAT(none.err, Catch::Contains("no grid point fits"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "none"));
}

TEST_CASE("capacity reports a shape that does not fit and answers for the others", "[study][cli]") {
  // Requests short enough that 100 of them reach a steady state.
  const auto result =
      run_servesim({"capacity", "--model", "llama-3-70b", "--target-rate", "2", "--shapes",
                    "h100-sxm:1,h100-sxm:4", "--slo", "ttft_p99=5", "--num-requests", "100",
                    "--max-replicas", "4", "--prompt-tokens", "256", "--output-tokens", "64"});
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Catch::Contains("does not fit: meta-llama/Meta-Llama-3-70B does not fit"));
  const auto json = run_servesim({"capacity", "--model", "llama-3-70b", "--target-rate", "2",
                                  "--shapes", "h100-sxm:1,h100-sxm:4", "--slo", "ttft_p99=5",
                                  "--num-requests", "100", "--max-replicas", "4", "--json",
                                  "--prompt-tokens", "256", "--output-tokens", "64"})
                        .json();
  const auto& unfit = json["shapes"][0];
  CHECK(unfit["replicas"].is_null());
  CHECK(unfit["points"].size() == 1);  // more replicas of it would not fit either
  CHECK_THAT(unfit["does_not_fit"].get<std::string>(), Catch::Contains("at TP 1"));
  CHECK(json["shapes"][1]["replicas"].is_number());
}

TEST_CASE("capacity stops at rejections, which every rate repeats, and says so once",
          "[study][cli]") {
  const auto result = run_servesim({"capacity", "--num-requests", "200", "--rate", "4", "--max-len",
                                    "600", "--max-len-policy", "reject", "--slo", "ttft_p99=10"});
  CHECK(result.exit_code == 4);
  const auto table = lines_of(result.out);
  CHECK(table.size() == 3);  // header, rule and the one point
  CHECK_THAT(result.out, !Catch::Contains("No rate meets"));
  CHECK_THAT(result.err, Catch::Contains("No rate meets the SLO: at 4 req/s") &&
                             Catch::Contains("requests rejected") &&
                             Catch::Contains("no other rate changes that"));
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
}

TEST_CASE("capacity prices the offered load over the steady state, whatever the run's length",
          "[study][cli]") {
  // Every request asks for 256 output tokens, so 8 req/s offer 2,048 tokens/s; the run's own
  // throughput falls short of that by the drain after the last arrival, which matters more
  // the shorter the run.
  for (const char* requests : {"300", "1200"}) {
    INFO(requests << " requests");
    const auto document =
        run_servesim({"capacity", "--target-rate", "8", "--slo", "ttft_p99=1", "--num-requests",
                      requests, "--prompt-tokens", "256", "--output-tokens", "256",
                      "--gpu-cost-per-hour", "2.5", "--max-replicas", "4", "--json"})
            .json();
    const auto& shape = document["shapes"][0];
    REQUIRE(shape["replicas"].is_number());
    const double usd_per_hour = 2.5 * shape["gpus"].get<double>();
    CHECK(shape["usd_per_million_output_tokens"].get<double>() ==
          Approx(usd_per_hour / (8 * 256 * 3600.0) * 1e6));
    // The window, in every point: from the end of the warm-up to the last arrival, before
    // the run ends.
    for (const auto& point : shape["points"]) {
      const auto& window = point["summary"]["steady_state"];
      CHECK(window["window_start_s"].get<double>() > 0);
      CHECK(window["window_end_s"].get<double>() < point["summary"]["duration_s"].get<double>());
      CHECK(window["throughput_requests_per_s"].get<double>() > 0);
    }
  }
}

TEST_CASE("sweep curves are titled with model, hardware, engine and workload", "[study][cli]") {
  servesim::test::ScratchDir dir("sweep_title");
  const auto out = dir.path() / "sweep";
  const auto result = run_servesim({"sweep", "--grid", "rate=2,8", "--num-requests", "60",
                                    "--model", "llama-3-8b", "--hw", "h100-sxm", "--engine", "vllm",
                                    "--workload", "alpaca", "--no-plots", "--out", out.string()});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const std::string title =
      "model llama-3-8b, hardware h100-sxm (TP 1), engine vllm, workload alpaca";
  CHECK_THAT(read_file(out / "latency_throughput.gp"),
             Catch::Contains("\"" + title + "\"") && Catch::Contains("throughput (requests/s)"));
  CHECK_FALSE(std::filesystem::exists(out / "latency_throughput.svg"));  // --no-plots
  const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
  CHECK(summary["plot"]["title"] == title);

  // `plot` redraws with the same title, against the offered rate when asked.
  const auto plotted = run_servesim({"plot", out.string(), "--no-render", "--x", "offered_rate"});
  REQUIRE(plotted.exit_code == 0);
  CHECK_THAT(read_file(out / "latency_throughput.gp"),
             Catch::Contains(title) && Catch::Contains("offered rate (requests/s)"));
  const auto bad = run_servesim({"plot", out.string(), "--x", "rate"});
  CHECK(bad.exit_code == 3);
  CHECK_THAT(bad.err, Catch::Contains("--x") && Catch::Contains("offered_rate"));

  // A swept axis is left out of the title: the legend names it.
  const auto by_hw = dir.path() / "by_hw";
  REQUIRE(run_servesim({"sweep", "--grid", "rate=2,8", "--grid", "hw=h100-sxm,a100-80gb",
                        "--num-requests", "40", "--no-plots", "--out", by_hw.string()})
              .exit_code == 0);
  const std::string varied =
      nlohmann::json::parse(read_file(by_hw / "summary.json"))["plot"]["title"];
  CHECK_THAT(varied, Catch::Contains("model llama-3-8b") && Catch::Contains("workload sharegpt"));
  CHECK_THAT(varied, !Catch::Contains("hardware"));
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

TEST_CASE("run --rate rescales a trace's arrivals to that mean rate, as --time-scale does",
          "[study][cli]") {
  servesim::test::ScratchDir dir("trace_rate");
  // Rows at 0, 1, 3 and 4 s: 3 gaps over 4 s, a recorded rate of 0.75 req/s.
  const auto trace = dir.write("t.csv",
                               "arrival_time_s,prompt_tokens,output_tokens\n"
                               "0,100,5\n1,100,5\n3,100,5\n4,100,5\n");
  const auto run = [&](std::vector<std::string> flags, const std::string& out) {
    std::vector<std::string> args{
        "run", "--workload", trace.string(), "--out", (dir.path() / out).string(), "--no-plots"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto result = run_servesim(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return servesim::test::csv_column(dir.path() / out / "requests.csv", "arrival_s");
  };
  CHECK(run({"--rate", "1.5"}, "rate") == std::vector<std::string>{"0", "0.5", "1.5", "2"});
  run({"--time-scale", "0.5"}, "scale");
  CHECK(read_file(dir.path() / "rate" / "requests.csv") ==
        read_file(dir.path() / "scale" / "requests.csv"));
  CHECK(run({"--rate", "inf"}, "inf") == std::vector<std::string>{"0", "0", "0", "0"});
  // The rate is that of the rows replayed: 0, 1 and 3 s are 2 gaps over 3 s.
  const auto three = run({"--rate", "4", "--num-requests", "3"}, "three");
  REQUIRE(three.size() == 3);
  CHECK(std::stod(three[1]) == Approx(1.0 / 6).margin(1e-9));
  CHECK(three[2] == "0.5");
  const auto config =
      nlohmann::json::parse(read_file(dir.path() / "rate" / "resolved_config.json"));
  CHECK(config["workload"]["arrival"]["rate_per_s"] == 1.5);

  servesim::test::require_error(
      run_servesim({"run", "--workload", trace.string(), "--rate", "2", "--time-scale", "2"}), 3,
      "trace.time_scale");
  const auto one_instant = dir.write("one.csv",
                                     "arrival_time_s,prompt_tokens,output_tokens\n"
                                     "2,100,5\n2,100,5\n");
  servesim::test::require_error(
      run_servesim({"run", "--workload", one_instant.string(), "--rate", "2"}), 3,
      "no rate to rescale");
}

TEST_CASE("a sweep over a trace's rate or time scale draws latency/throughput curves",
          "[study][cli]") {
  servesim::test::ScratchDir dir("trace_sweep");
  std::string rows = "arrival_time_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 200; ++i)
    rows += std::to_string(i * 0.5) + "," + std::to_string(100 + (i * 37) % 400) + ",50\n";
  const auto trace = dir.write("t.csv", rows);
  for (const std::string axis : {"rate=2,8", "time_scale=1,0.25"}) {
    const auto out = dir.path() / axis.substr(0, axis.find('='));
    const auto result = run_servesim({"sweep", "--workload", trace.string(), "--grid", axis,
                                      "--out", out.string(), "--no-plots"});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    // Never a claim of plots it did not draw: --no-plots writes the data and script only.
    CHECK_THAT(result.out, Catch::Contains("curves.dat, latency_throughput.gp (not rendered)"));
    CHECK_FALSE(std::filesystem::exists(out / "latency_throughput.svg"));
    const auto curve = lines_of(read_file(out / "curves.dat"));
    REQUIRE(curve.size() >= 4);
    // Each point sits at its offered rate: the rate axis's value, or for a time scale the
    // rate its steady state measured (2 req/s recorded, 8 at a quarter of the time).
    std::istringstream first(curve[2]), second(curve[3]);
    double offered_low = 0, offered_high = 0;
    first >> offered_low;
    second >> offered_high;
    CHECK(offered_low == Approx(2).epsilon(0.1));
    CHECK(offered_high == Approx(8).epsilon(0.1));
  }
  // Without a load axis there is no curve, and the closing line names none.
  const auto flat = run_servesim({"sweep", "--workload", trace.string(), "--grid", "tp=1", "--out",
                                  (dir.path() / "flat").string()});
  REQUIRE(flat.exit_code == 0);
  CHECK_THAT(flat.out, Catch::Contains("command.json}") && !Catch::Contains("latency_throughput"));
}

TEST_CASE("compare and sweep say which points ran the same schedule", "[study][cli]") {
  const nlohmann::json a = {{"ttft_s", {{"p99", 0.5}}}, {"preemptions", 0}, {"duration_s", 9.0}};
  nlohmann::json b = a;
  b["kv_memory"] = {{"free", 0.3}};  // memory may differ
  nlohmann::json c = a;
  c["ttft_s"]["p99"] = std::nextafter(0.5, 1.0);  // one bit apart: another schedule
  const nlohmann::json unfit = {{"does_not_fit", "too big"}};
  const auto groups = servesim::same_schedule_groups({&a, &c, &unfit, &b, &c, &unfit});
  REQUIRE(groups.size() == 2);
  CHECK(groups[0] == std::vector<std::size_t>{0, 3});
  CHECK(groups[1] == std::vector<std::size_t>{1, 4});
  CHECK(servesim::same_schedule_note(groups, {"a", "c", "u", "b", "c2", "u2"}) ==
        "Same schedule: a and b; c and c2 (identical latencies, throughput and preemptions: "
        "they differ at most in memory)\n");
  CHECK(servesim::same_schedule_note({}, {}).empty());

  // Paged allocation with 16- and 32-token blocks on a cache far from full: one schedule.
  const auto compared =
      run_servesim({"compare", "--policies", "vllm:paged,vllm:paged:32", "--num-requests", "100"});
  REQUIRE(compared.exit_code == 0);
  CHECK_THAT(compared.out, Catch::Contains("Same schedule: vllm:paged and vllm:paged:32"));
  const auto distinct = run_servesim(
      {"compare", "--policies", "vllm:paged,orca:contiguous:max", "--num-requests", "100"});
  REQUIRE(distinct.exit_code == 0);
  CHECK_THAT(distinct.out, !Catch::Contains("Same schedule"));
  const auto swept =
      run_servesim(small_sweep({"--grid", "block-size=16,32", "--grid", "rate=4,8"}));
  REQUIRE(swept.exit_code == 0);
  CHECK_THAT(swept.out, Catch::Contains("Same schedule: point 0 and point 2; point 1 and point 3"));
}
