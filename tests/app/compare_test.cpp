#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "sim/app/policy_list.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("policy lists become configuration overrides", "[app]") {
  const auto list =
      parse_policy_list("orca:contiguous:fixed-512:first_fit,vllm:paged:32,static:paged");
  REQUIRE(list.size() == 3);
  CHECK(list[0].label == "orca:contiguous:fixed-512:first_fit");
  std::vector<std::string> first;
  for (const auto& o : list[0].overrides)
    first.push_back(o.assignment);
  CHECK(first == std::vector<std::string>{
                     "scheduler.name=\"orca\"", "allocator.name=\"contiguous\"",
                     "allocator.fixed_reservation_tokens=512", "allocator.reservation=\"fixed\"",
                     "allocator.placement=\"first_fit\""});
  CHECK(list[1].overrides.back().assignment == "allocator.block_size=32");
  CHECK(list[2].overrides.size() == 2);
  REQUIRE_THROWS_WITH(parse_policy_list("vllm"), Contains("wrong number of fields"));
  REQUIRE_THROWS_WITH(parse_policy_list("vllm:paged:0"), Contains("positive integer"));
  REQUIRE_THROWS_WITH(parse_policy_list("vllm::16"), Contains("empty field"));
  REQUIRE_THROWS_WITH(parse_policy_list("orca:contiguous:fixed-x"), Contains("fixed-N"));
  const auto caching = parse_policy_list("vllm_v1:paged:16:prefix,vllm_v1:paged:16:no_prefix");
  CHECK(caching[0].overrides.back().assignment == "engine.enable_prefix_caching=true");
  CHECK(caching[1].overrides.back().assignment == "engine.enable_prefix_caching=false");
  REQUIRE_THROWS_WITH(parse_policy_list("vllm_v1:paged:16:cache"), Contains("prefix or no_prefix"));
}

TEST_CASE("compare shows what prefix caching shares: paged with and without it, contiguous",
          "[app][prefix]") {
  // Eight system prompts of 512 tokens, each shared by four users.
  const test::ScratchDir dir("compare_prefix");
  const auto spec = dir.write("spec.json", R"({"arrival": {"process": "poisson", "rate_per_s": 20},
      "num_requests": 400, "lengths": {"distribution": "shared_prefix", "groups": 8,
      "users_per_group": 4, "system_prompt_tokens": 512, "question_tokens": 64,
      "output_tokens": 64}})");
  const auto r = test::run_servesim(
      {"compare", "--policies",
       "vllm_v1:paged:16:prefix,vllm_v1:paged:16:no_prefix,sarathi:contiguous:max", "--workload",
       spec.string(), "--kv-capacity-tokens", "60000", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto runs = r.json();
  const auto& on = runs["vllm_v1:paged:16:prefix"];
  const auto& off = runs["vllm_v1:paged:16:no_prefix"];
  const auto& contiguous = runs["sarathi:contiguous:max"];
  // Every request but each group's first finds the prompt's 32 full blocks.
  CHECK(on["prefix_cache_hit_rate"].get<double>() == Approx((400.0 - 8) * 512 / (400.0 * 576)));
  CHECK(on["kv_memory"]["cached"].get<double>() > 0);
  for (const auto* other : {&off, &contiguous}) {
    CHECK((*other)["prefix_cache_hit_rate"].get<double>() == 0);
    CHECK((*other)["kv_memory"]["cached"].get<double>() == 0);
  }
  CHECK(on["ttft_s"]["mean"].get<double>() < off["ttft_s"]["mean"].get<double>());
}

TEST_CASE("compare runs identical requests through each combination", "[app]") {
  test::ScratchDir dir("compare");
  const auto out = dir.path() / "out";
  const auto r = test::run_servesim({"compare", "--policies", "vllm:paged:16,vllm:paged:256",
                                     "--num-requests", "200", "--rate", "30",
                                     "--kv-capacity-tokens", "12000", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("vllm:paged:16") && Contains("KV internal fragmentation"));
  // Same seed: the same arrivals and lengths reach both runs.
  const auto requests = [&](const char* folder) {
    std::ifstream in(out / folder / "requests.csv");
    std::vector<std::string> arrivals;
    std::string line;
    while (std::getline(in, line)) {
      const auto a = line.find(',', line.find(',') + 1);
      const auto b = line.find(',', a + 1);
      arrivals.push_back(line.substr(a + 1, b - a - 1));  // arrival_s
    }
    return arrivals;
  };
  CHECK(requests("vllm-paged-16") == requests("vllm-paged-256"));
  const auto small = nlohmann::json::parse(std::ifstream(out / "vllm-paged-16" / "summary.json"));
  const auto large = nlohmann::json::parse(std::ifstream(out / "vllm-paged-256" / "summary.json"));
  // Bigger blocks strand more of each sequence's last block.
  CHECK(large["kv_memory"]["internal_fragmentation"].get<double>() >
        small["kv_memory"]["internal_fragmentation"].get<double>());
  std::ifstream combined(out / "compare.csv");
  std::string header, row1, row2, extra;
  std::getline(combined, header);
  std::getline(combined, row1);
  std::getline(combined, row2);
  CHECK(header.rfind("policy,", 0) == 0);
  CHECK(row1.rfind("vllm:paged:16,", 0) == 0);
  CHECK(row2.rfind("vllm:paged:256,", 0) == 0);
  CHECK_FALSE(std::getline(combined, extra));
}

TEST_CASE("the vLLM paper setup: Max reservations fit 7 requests and strand 8.85%", "[app]") {
  for (const char* placement : {"buddy", "first_fit"}) {
    INFO(placement);
    test::ScratchDir dir(std::string("paper_") + placement);
    const auto out = dir.path() / "out";
    const auto config = test::source_dir() / "workloads" / "scenarios" / "vllm-paper-opt13b.json";
    const auto r = test::run_servesim({"run", "--config", config.string(), "--scheduler", "orca",
                                       "--allocator", "contiguous", "--reservation", "max",
                                       "--placement", placement, "--rate", "inf", "--num-requests",
                                       "20", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::ifstream in(out / "iterations.csv");
    std::string header, first;
    std::getline(in, header);
    std::getline(in, first);
    std::vector<std::string> cells;
    std::stringstream row(first);
    for (std::string cell; std::getline(row, cell, ',');)
      cells.push_back(cell);
    REQUIRE(cells.size() == 23);
    CHECK(cells[3] == "7");      // batch_size: seven 2,048-token regions
    CHECK(cells[8] == "15728");  // kv_capacity_tokens: 12 GiB / 800 KiB
    CHECK(cells[13] == "1392");  // kv_external_fragmentation
    CHECK(1392.0 / 15728 == Approx(0.0885).margin(0.0001));
  }
}

TEST_CASE("scheduler and allocator pairs that cannot work are refused", "[app]") {
  const auto r = test::run_servesim({"run", "--scheduler", "vllm", "--allocator", "contiguous"});
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Contains("does not work with allocator \"contiguous\"") &&
                        Contains("valid pairs: vllm:paged"));
  const auto bad = test::run_servesim({"run", "--block-size", "0"});
  CHECK(bad.exit_code == 3);
  CHECK_THAT(bad.err, Contains("block_size"));
  const auto budget = test::run_servesim({"run", "--scheduler", "sarathi", "--token-budget", "0"});
  CHECK(budget.exit_code == 3);
  const auto reservation = test::run_servesim(
      {"run", "--scheduler", "orca", "--allocator", "contiguous", "--reservation", "huge"});
  CHECK(reservation.exit_code == 3);
  CHECK_THAT(reservation.err, Contains("valid: max, pow2, oracle, fixed"));
  const auto oversized =
      test::run_servesim({"run", "--scheduler", "orca", "--allocator", "contiguous",
                          "--kv-capacity-tokens", "1000", "--max-len", "2048"});
  CHECK(oversized.exit_code == 4);  // infeasible: the cache cannot hold one reservation
  CHECK_THAT(oversized.err, Contains("exceeds the KV capacity of 1000 tokens"));
}

TEST_CASE("compare reports a policy that does not fit and compares the others", "[app]") {
  test::ScratchDir dir("compare_not_fitting");
  const auto out = dir.path() / "out";
  // Max-length reservations of 2,048 tokens exceed a 1,500-token cache; paging fits.
  const std::vector<std::string> args = {"compare",
                                         "--policies",
                                         "orca:contiguous:max,vllm:paged:16",
                                         "--num-requests",
                                         "40",
                                         "--rate",
                                         "10",
                                         "--max-len",
                                         "2048",
                                         "--kv-capacity-tokens",
                                         "1500",
                                         "--no-plots"};
  auto with_out = args;
  with_out.insert(with_out.end(), {"--out", out.string()});
  const auto r = test::run_servesim(with_out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("orca:contiguous:max: does not fit:"));
  const auto summary = nlohmann::json::parse(test::read_file(out / "summary.json"));
  CHECK(summary["orca:contiguous:max"].contains("does_not_fit"));
  CHECK(summary["vllm:paged:16"]["requests_completed"].get<int>() > 0);
  CHECK(std::filesystem::exists(out / "compare.csv"));
  // Each policy's records are written as its run goes; one that does not fit leaves no folder.
  CHECK(std::filesystem::exists(out / "vllm-paged-16" / "requests.csv"));
  CHECK(std::filesystem::exists(out / "vllm-paged-16" / "iterations.csv"));
  CHECK_FALSE(std::filesystem::exists(out / "orca-contiguous-max"));

  auto json = args;
  json.push_back("--json");
  const auto j = test::run_servesim(json);
  REQUIRE(j.exit_code == 0);
  CHECK(j.json()["orca:contiguous:max"].contains("does_not_fit"));
  // No policy fits: the run's own error, exit code 4.
  test::require_error(
      test::run_servesim({"compare", "--policies", "orca:contiguous:max,orca:contiguous:fixed-2048",
                          "--num-requests", "10", "--max-len", "2048", "--kv-capacity-tokens",
                          "1000", "--no-plots"}),
      4, "no policy fits");
}
