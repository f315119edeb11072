// The sweep command: its grid, rows, curves and points that do not fit.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/study/same_schedule.h"
#include "tests/study/study_cli_support.h"
#include "tests/support/test_support.h"

using servesim::test::lines_of;
using servesim::test::read_file;
using servesim::test::run_servesim;
using servesim::test::small_sweep;

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
