// sweep --seeds: replicate runs folded into means with 95% confidence half-widths, by hand and
// end to end.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/seed_replicates.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("Student's t quantiles for 95% intervals", "[seeds]") {
  CHECK(student_t_95(1) == 12.706);
  CHECK(student_t_95(2) == 4.303);
  CHECK(student_t_95(30) == 2.042);
  CHECK(student_t_95(60) == Approx(2.000).epsilon(0.002));   // tables: 2.000
  CHECK(student_t_95(120) == Approx(1.980).epsilon(0.002));  // tables: 1.980
  CHECK_THROWS_AS(student_t_95(0), InvariantError);
}

TEST_CASE("Seed replicates fold into means and 95% half-widths", "[seeds]") {
  const std::vector<GridAxis> axes =
      with_seed_axis({GridAxis{"rate", {4, 8}}}, /*first_seed=*/5, /*seeds=*/3);
  REQUIRE(axes.size() == 2);
  CHECK(axes[1].name == "seed");
  CHECK(axes[1].values == std::vector<nlohmann::json>{5, 6, 7});
  CHECK_THROWS_WITH(with_seed_axis({GridAxis{"seed", {1, 2}}}, 0, 2),
                    Contains("cannot also sweep \"seed\""));
  CHECK_THROWS_WITH(with_seed_axis({}, 0, 1), Contains("at least 2 replicates"));

  SweepResult per_seed;
  per_seed.axes = {"rate", "seed"};
  const double ttft[] = {1.0, 2.0, 3.0};
  for (int k = 0; k < 3; ++k) {
    nlohmann::json summary = {{"requests_completed", 100 + k},
                              {"ttft_s", {{"p99", ttft[k]}}},
                              {"steady_state", {{"stable", k != 1}}},
                              {"model", "m"}};
    if (k == 1) summary["steady_state"]["unstable"] = "backlog";
    per_seed.rows.push_back({{"4", std::to_string(5 + k)}, {4, 5 + k}, summary});
  }
  for (int k = 0; k < 3; ++k) {
    per_seed.rows.push_back(
        {{"8", std::to_string(5 + k)}, {8, 5 + k}, {{"does_not_fit", "too big"}}});
  }
  const SweepResult folded = fold_seed_replicates(per_seed, 3);
  CHECK(folded.axes == std::vector<std::string>{"rate"});
  REQUIRE(folded.rows.size() == 2);
  const nlohmann::json& s = folded.rows[0].summary;
  CHECK(folded.rows[0].labels == std::vector<std::string>{"4"});
  CHECK(folded.rows[0].values == nlohmann::json::array({4}));
  // Mean 2, sample sd 1: half-width t(2) x 1 / sqrt(3).
  CHECK(s.at("ttft_s").at("p99") == 2.0);
  CHECK(s.at("ttft_s").at("p99_ci95").get<double>() == Approx(4.303 / std::sqrt(3.0)));
  CHECK(s.at("requests_completed") == 101.0);
  CHECK(s.at("requests_completed_ci95").get<double>() == Approx(4.303 / std::sqrt(3.0)));
  // Booleans become the share of seeds; text stays the first seed's.
  CHECK(s.at("steady_state").at("stable").get<double>() == Approx(2.0 / 3.0));
  // The first seed is stable, the second not: the point is not stable, and says so.
  CHECK(s.at("steady_state").at("stable_seeds") == 2);
  CHECK(s.at("steady_state").at("unstable") == "1 of 3 seeds unstable: backlog");
  CHECK(s.at("steady_state").at("undecided") == false);
  CHECK(s.at("model") == "m");
  CHECK(s.at("seeds") == 3);
  CHECK(folded.rows[1].summary == nlohmann::json{{"does_not_fit", "too big"}});
}

TEST_CASE("sweep --seeds writes means, half-widths, every run and error bars", "[seeds][cli]") {
  const test::ScratchDir dir("sweep_seeds");
  const auto out = dir.path() / "sw";
  const auto r =
      test::run_servesim({"sweep", "--grid", "rate=4,12", "--seeds", "3", "--num-requests", "150",
                          "--seed", "2", "--no-plots", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("sweep_seeds.csv"));
  // Header first, then one row per point (sweep.csv) or per run (sweep_seeds.csv).
  using Table = std::vector<std::vector<std::string>>;
  const Table means = parse_csv(test::read_file(out / "sweep.csv"), "sweep.csv");
  const Table runs = parse_csv(test::read_file(out / "sweep_seeds.csv"), "sweep_seeds.csv");
  REQUIRE(means.size() == 1 + 2);
  REQUIRE(runs.size() == 1 + 6);
  const auto column = [](const Table& t, const std::string& name) {
    const auto it = std::find(t[0].begin(), t[0].end(), name);
    REQUIRE(it != t[0].end());
    return static_cast<std::size_t>(it - t[0].begin());
  };
  const std::size_t seed = column(runs, "seed");
  CHECK(runs[1][seed] == "2");
  CHECK(runs[3][seed] == "4");
  for (std::size_t point = 0; point < 2; ++point) {
    double sum = 0, squares = 0;
    std::vector<double> values;
    for (std::size_t k = 0; k < 3; ++k)
      values.push_back(std::stod(runs[1 + 3 * point + k][column(runs, "ttft_s.p99")]));
    for (const double v : values)
      sum += v;
    const double mean = sum / 3;
    for (const double v : values)
      squares += (v - mean) * (v - mean);
    const double half = 4.303 * std::sqrt(squares / 2 / 3);
    CHECK(std::stod(means[1 + point][column(means, "ttft_s.p99")]) == Approx(mean));
    CHECK(std::stod(means[1 + point][column(means, "ttft_s.p99_ci95")]) == Approx(half));
    CHECK(half > 0);  // the seeds differ
  }
  CHECK_THAT(test::read_file(out / "latency_throughput.gp"), Contains("with yerrorlines"));
  // Each point's stable cell counts its stable seeds, as sweep.csv's stable_seeds does.
  for (std::size_t point = 0; point < 2; ++point) {
    const std::string stable_seeds = means[1 + point][column(means, "steady_state.stable_seeds")];
    std::int64_t counted = 0;
    for (std::size_t k = 0; k < 3; ++k)
      counted += runs[1 + 3 * point + k][column(runs, "steady_state.stable")] == "1" ? 1 : 0;
    CHECK(std::stoll(stable_seeds) == counted);
    CHECK_THAT(r.out, Contains(" " + stable_seeds + "/3 "));
  }

  const auto twice =
      test::run_servesim({"sweep", "--grid", "seed=1,2", "--seeds", "2", "--num-requests", "20"});
  test::require_error(twice, 2, "cannot also sweep \"seed\"");
}
