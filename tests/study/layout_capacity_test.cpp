// capacity --disaggregated: the fewest replicas per role of every prefill/decode pair of
// shapes beside the aggregated answers, the best of each kind, the Pareto front and a
// runnable configuration of each front point.
#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "sim/study/html_report.h"
#include "tests/support/test_support.h"

namespace {

using servesim::test::run_servesim;

// Llama-3-8B, ShareGPT at 60 req/s on H100s and A100s: aggregated needs 2 H100s, and layouts
// need more than one replica of a role.
std::vector<std::string> search(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"capacity",
                                "--target-rate",
                                "60",
                                "--disaggregated",
                                "--slo",
                                "ttft_p99=0.5",
                                "--slo",
                                "tpot_p99=0.02",
                                "--num-requests",
                                "4000",
                                "--max-len",
                                "4096",
                                "--shapes",
                                "h100-sxm:1,a100-80gb:1",
                                "--max-replicas",
                                "16"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("capacity --disaggregated answers each layout with its fewest replicas per role",
          "[study][cli]") {
  servesim::test::ScratchDir dir("layouts");
  const auto result = run_servesim(search({"--json", "--out", (dir.path() / "j1").string()}));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto document = result.json();
  CHECK(document["mode"] == "layouts");
  const auto& deployments = document["deployments"];
  // Two aggregated shapes, then the four pairs of them, prefill shape first.
  REQUIRE(deployments.size() == 6);
  CHECK(deployments[0]["kind"] == "aggregated");
  CHECK(deployments[1]["kind"] == "aggregated");
  CHECK(deployments[3]["prefill"]["hardware"] == "h100-sxm");
  CHECK(deployments[3]["decode"]["hardware"] == "a100-80gb");

  std::int64_t fewest_disaggregated_gpus = 1 << 30;
  int searched = 0;
  for (std::size_t i = 2; i < deployments.size(); ++i) {
    const auto& d = deployments[i];
    INFO(d.dump().substr(0, 400));
    CHECK(d["kind"] == "disaggregated");
    // Rate matching ran for every layout; a pruned one says so and was not simulated.
    REQUIRE(d.contains("rate_matching"));
    if (d.contains("skipped")) {
      CHECK_THAT(d["skipped"].get<std::string>(), Catch::Contains("pruned"));
      CHECK_FALSE(d.contains("points"));
      continue;
    }
    ++searched;
    REQUIRE(d["prefill"]["replicas"].is_number());
    const auto prefill = d["prefill"]["replicas"].get<std::int64_t>();
    const auto decode = d["decode"]["replicas"].get<std::int64_t>();
    // The rate-matched counts are lower bounds.
    CHECK(d["rate_matching"]["prefill_replicas"].get<std::int64_t>() <= prefill);
    CHECK(d["rate_matching"]["decode_replicas"].get<std::int64_t>() <= decode);
    // The answer met the SLO; one replica fewer of either role was tried and failed.
    bool answer_met = false;
    bool fewer_prefill_failed = prefill == 1;
    bool fewer_decode_failed = decode == 1;
    for (const auto& point : d["points"]) {
      const auto p = point["prefill_replicas"].get<std::int64_t>();
      const auto q = point["decode_replicas"].get<std::int64_t>();
      const bool met = point["verdict"]["met"].get<bool>();
      if (p == prefill && q == decode) answer_met = met;
      if (p == prefill - 1 && q >= decode && !met) fewer_prefill_failed = true;
      if (p == prefill && q == decode - 1 && !met) fewer_decode_failed = true;
    }
    CHECK(answer_met);
    CHECK(fewer_prefill_failed);
    CHECK(fewer_decode_failed);
    CHECK(d["gpus"] == prefill + decode);
    CHECK(d["usd_per_hour"].get<double>() > 0);
    fewest_disaggregated_gpus = std::min(fewest_disaggregated_gpus, d["gpus"].get<std::int64_t>());
  }
  CHECK(searched >= 1);
  // The best of each kind has the fewest GPUs of its kind.
  CHECK(document["best"]["aggregated"]["gpus"] == 2);
  CHECK(document["best"]["disaggregated"]["gpus"] == fewest_disaggregated_gpus);

  // The front: better per GPU means worse per user; each point's configuration runs.
  const auto& front = document["front"];
  REQUIRE(front.size() >= 1);
  CHECK(front[0]["gpus"] == 2);  // the fewest GPUs are the most output per GPU
  for (std::size_t i = 1; i < front.size(); ++i) {
    CHECK(front[i]["output_tokens_per_s_per_gpu"] < front[i - 1]["output_tokens_per_s_per_gpu"]);
    CHECK(front[i]["output_tokens_per_s_per_user"] > front[i - 1]["output_tokens_per_s_per_user"]);
  }
  for (const auto& point : front) {
    const auto config = dir.path() / "j1" / point["config"].get<std::string>();
    INFO(config);
    REQUIRE(std::filesystem::exists(config));
    const auto run = run_servesim({"run", "--config", config.string(), "--num-requests", "300",
                                   "--out", (dir.path() / "front_run").string()});
    REQUIRE(run.exit_code == 0);
    const auto summary =
        nlohmann::json::parse(servesim::test::read_file(dir.path() / "front_run" / "summary.json"));
    CHECK(summary.contains("pools") ==
          (point["replicas"].get<std::string>().find('p') != std::string::npos));
    std::filesystem::remove_all(dir.path() / "front_run");
  }

  // The report names the best of each kind as the console does, with its replicas, and shows
  // the front.
  const std::string html = servesim::html_report(dir.path() / "j1").html;
  const auto& best_disaggregated = document["best"]["disaggregated"];
  CHECK_THAT(html,
             Catch::Contains("best disaggregated: " +
                             best_disaggregated["deployment"].get<std::string>()) &&
                 Catch::Contains(">" + best_disaggregated["prefill"]["replicas"].dump() + "p" +
                                 best_disaggregated["decode"]["replicas"].dump() + "d</td>") &&
                 Catch::Contains("Pareto front"));
  CHECK_THAT(html, !Catch::Contains("tp0 pp0"));
  for (const auto& point : front)
    CHECK_THAT(html, Catch::Contains(point["config"].get<std::string>()));

  // Two worker threads write the same files.
  REQUIRE(run_servesim(search({"--json", "-j", "2", "--out", (dir.path() / "j2").string()}))
              .exit_code == 0);
  for (const char* file : {"summary.json", "capacity.csv"}) {
    INFO(file);
    CHECK(servesim::test::read_file(dir.path() / "j1" / file) ==
          servesim::test::read_file(dir.path() / "j2" / file));
  }
}

TEST_CASE("capacity --disaggregated refuses what it cannot search", "[study][cli]") {
  servesim::test::require_error(
      run_servesim({"capacity", "--disaggregated", "--slo", "ttft_p99=1"}), 2, "--target-rate");
  servesim::test::require_error(run_servesim(search({"--minimize", "speed"})), 2, "--minimize");
  servesim::test::require_error(run_servesim(search({"--disaggregation", "1p1d"})), 2,
                                "drop the disaggregation section");
}
