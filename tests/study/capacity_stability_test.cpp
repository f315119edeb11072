#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/support/test_support.h"

namespace {

using servesim::test::run_servesim;

// One server of deterministic service, one request at a time (an M/D/1 queue).
std::vector<std::string> md1(std::vector<std::string> args) {
  const std::vector<std::string> queue{"--scheduler",     "static",
                                       "--batch-size",    "1",
                                       "--prompt-tokens", "512",
                                       "--output-tokens", "1",
                                       "--set",           "engine.host.frontend_latency_s=0"};
  args.insert(args.end(), queue.begin(), queue.end());
  return args;
}

double md1_service_s() {
  const auto one = run_servesim(md1({"run", "--rate", "inf", "--num-requests", "1", "--json"}));
  REQUIRE(one.exit_code == 0);
  return one.json()["ttft_s"]["mean"].get<double>();
}

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("capacity answers a rate the queue keeps up with, however loose the SLO",
          "[study][cli][stability]") {
  // A TTFT limit of 1,000 service times: a run of a few thousand requests meets it even
  // overloaded, before its queue grows that long. Only a stable rate may be the answer, and
  // the M/D/1 queue is stable below 1 / service.
  const double service_s = md1_service_s();
  const auto result = run_servesim(md1({"capacity", "--rate", "1", "--num-requests", "4000",
                                        "--slo", "ttft_p99=" + std::to_string(1000 * service_s),
                                        "--precision", "0.02", "--json", "-j", "2"}));
  REQUIRE(result.exit_code == 0);
  const auto document = result.json();
  REQUIRE(document["outcome"] == "found");
  const double found = document["rate_per_s"].get<double>();
  INFO("capacity " << 1 / service_s << " req/s, found " << found);
  // A backlog growing by up to 2% of the offered rate is within the stability test's
  // tolerance (the search's precision): the answer is at most that far past 1 / service.
  CHECK(found <= 1.02 / service_s);
  CHECK(found >= 0.85 / service_s);
  bool unstable_seen = false;
  for (const auto& point : document["points"]) {
    const auto& steady = point["summary"]["steady_state"];
    if (point["verdict"]["met"].get<bool>()) {
      CHECK(steady["stable"].get<bool>());
      CHECK(steady["served_ratio"].get<double>() >= 0.95);
    } else {
      // Every failure is the queue's: the latency limit itself is never reached. Just past
      // 1 / service the backlog grows too slowly for 4,000 requests to show it: undecided.
      CHECK_FALSE(steady["stable"].get<bool>());
      CHECK_THAT(point["verdict"]["violations"][0].get<std::string>(),
                 Catch::StartsWith("unstable: ") || Catch::StartsWith("undecided: "));
      unstable_seen = true;
    }
    CHECK(steady["requests_simulated"].get<std::int64_t>() <= 4000);
  }
  CHECK(unstable_seen);
}

TEST_CASE("capacity's answer does not depend on --num-requests beyond its precision",
          "[study][cli][stability]") {
  const double service_s = md1_service_s();
  std::vector<double> answers;
  for (const char* requests : {"4000", "40000"}) {
    const auto result =
        run_servesim(md1({"capacity", "--rate", "1", "--num-requests", requests, "--slo",
                          "ttft_p99=" + std::to_string(4 * service_s), "--json", "-j", "2"}));
    REQUIRE(result.exit_code == 0);
    answers.push_back(result.json()["rate_per_s"].get<double>());
  }
  INFO(answers[0] << " and " << answers[1] << " req/s");
  // Each answer is within the 2% precision of its own boundary, the boundaries measured on
  // runs that grow up to 4,000 and 40,000 requests near them: within twice the precision.
  CHECK(std::abs(answers[0] - answers[1]) <= 0.04 * std::max(answers[0], answers[1]));
}

TEST_CASE("An SLO below one request's own latency is unreachable, found before any search",
          "[study][cli][stability]") {
  // Llama-3.1-8B decodes one token in about 68 ms on an L4: TPOT 50 ms is out of reach.
  for (const bool per_target : {false, true}) {
    std::vector<std::string> args{"capacity", "--model",   "llama-3.1-8b",  "--shapes",
                                  "l4:1",     "--slo",     "tpot_p99=0.05", "--num-requests",
                                  "200",      "--max-len", "8192"};
    if (per_target) args.insert(args.end(), {"--target-rate", "10"});
    const auto result = run_servesim(args);
    CHECK(result.exit_code == 4);
    CHECK_THAT(result.out + result.err, Catch::Contains("unreachable: TPOT p99 at batch 1 is 6"));
    args.push_back("--json");
    const auto document = run_servesim(args).json();
    REQUIRE(document["shapes"].size() == 1);
    CHECK(document["shapes"][0]["points"].empty());  // no search point ran
  }
}

TEST_CASE("capacity --shapes without --target-rate answers each shape's highest rate, priced",
          "[study][cli][stability]") {
  const auto result =
      run_servesim({"capacity", "--shapes", "h100-sxm:1@3,a100-80gb:1@2", "--slo", "ttft_p99=1",
                    "--num-requests", "400", "--precision", "0.1", "--json"});
  REQUIRE(result.exit_code == 0);
  const auto document = result.json();
  REQUIRE(document["shapes"].size() == 2);
  for (const auto& shape : document["shapes"]) {
    INFO(shape["hardware"]);
    REQUIRE(shape["outcome"] == "found");
    const double rate = shape["rate_per_s"].get<double>();
    const double usd_per_hour = shape["usd_per_hour"].get<double>();
    CHECK(usd_per_hour == (shape["hardware"] == "h100-sxm" ? 3.0 : 2.0));
    CHECK(shape["usd_per_thousand_requests"].get<double>() == Approx(usd_per_hour / (rate * 3.6)));
    CHECK(shape["usd_per_million_tokens"].get<double>() <
          shape["usd_per_million_output_tokens"].get<double>());
    CHECK(shape["usd_per_million_input_tokens"].get<double>() > 0);
  }
  CHECK(document["shapes"][0]["rate_per_s"] > document["shapes"][1]["rate_per_s"]);
}

TEST_CASE("sweep reports the steady-state throughput and the stability of each point",
          "[study][cli][stability]") {
  servesim::test::ScratchDir dir("sweep_steady");
  const auto result = run_servesim({"sweep", "--grid", "rate=2,200", "--num-requests", "400",
                                    "--no-plots", "--out", (dir.path() / "out").string()});
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Catch::Contains("run req/s") && Catch::Contains("stable"));
  const std::string csv = contents(dir.path() / "out" / "sweep.csv");
  CHECK_THAT(csv, Catch::Contains("steady_state.throughput_requests_per_s") &&
                      Catch::Contains("steady_state.stable") &&
                      Catch::Contains("throughput_requests_per_s"));
  const auto document = nlohmann::json::parse(contents(dir.path() / "out" / "summary.json"));
  const auto& points = document["points"];
  REQUIRE(points.size() == 2);
  CHECK(points[0]["summary"]["steady_state"]["stable"] == true);
  CHECK(points[1]["summary"]["steady_state"]["stable"] == false);  // 200 req/s: overloaded
  CHECK_FALSE(std::filesystem::exists(dir.path() / "out" / "journal.jsonl"));
}

TEST_CASE("resuming refuses a folder of another study in one line, touching nothing",
          "[study][cli][stability]") {
  servesim::test::ScratchDir dir("resume_other");
  const auto folder = dir.path() / "study";
  std::filesystem::create_directories(folder);
  const std::string journal =
      R"({"servesim_journal":1,"study":{"arguments":["--grid","rate=1"],"command":"sweep"}})"
      "\n";
  std::ofstream(folder / "journal.jsonl", std::ios::binary) << journal;
  const auto other = run_servesim(
      {"sweep", "--grid", "rate=2", "--num-requests", "50", "--resume", folder.string()});
  CHECK(other.exit_code == 3);
  CHECK_THAT(other.err, Catch::Contains("journal of another study"));
  CHECK(std::count(other.err.begin(), other.err.end(), '\n') == 1);
  CHECK(contents(folder / "journal.jsonl") == journal);
  CHECK(std::distance(std::filesystem::directory_iterator(folder),
                      std::filesystem::directory_iterator{}) == 1);
  // A finished run's folder holds no journal.
  std::filesystem::remove(folder / "journal.jsonl");
  std::ofstream(folder / "summary.json") << "{}\n";
  const auto none = run_servesim({"capacity", "--slo", "ttft_p99=1", "--resume", folder.string()});
  CHECK(none.exit_code == 3);
  CHECK_THAT(none.err, Catch::Contains("holds no study journal"));
  CHECK(contents(folder / "summary.json") == "{}\n");
}
