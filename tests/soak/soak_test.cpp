// A day of simulated serving under bursty arrivals and a KV cache far too small for the
// bursts, with both preemption modes: the run must end with every request finished or
// rejected, every runtime invariant holding (a broken one throws), and a consistent summary.
#include <cmath>

#include <catch2/catch.hpp>

#include "sim/app/simulation.h"
#include "sim/config/run_config.h"
#include "tests/support/test_support.h"

namespace {

constexpr double kDayS = 86400;

nlohmann::json soak_config(const std::string& preemption) {
  nlohmann::json config = servesim::run_config_to_json(servesim::RunConfig{});
  config["seed"] = 11;
  config["max_len"] = 2048;
  config["memory"]["kv_capacity_tokens"] = 3072;
  config["memory"]["swap_space_gib"] = 0.25;  // 2,048 tokens of Llama-3-8B KV
  config["scheduler"]["name"] = "vllm";       // V0: vLLM V1 has no swap
  config["scheduler"]["preemption"] = preemption;
  config["scheduler"]["max_num_seqs"] = 64;
  config["output"] = {{"request_records", false}, {"iteration_records", false}};
  // Gamma gaps with CV 8: long idle stretches, then bursts of dozens of requests at once.
  config["workload"] = {
      {"arrival", {{"process", "gamma"}, {"rate_per_s", 0.02}, {"cv", 8}}},
      {"lengths",
       {{"distribution", "independent"},
        {"prompt", {{"distribution", "uniform"}, {"min", 16}, {"max", 1024}}},
        {"output", {{"distribution", "lognormal"}, {"mean", 300}, {"std", 300}, {"max", 1024}}}}},
      {"duration_s", kDayS}};
  return config;
}

}  // namespace

TEST_CASE("Soak: 24 simulated hours of bursty arrivals with heavy preemption", "[soak]") {
  for (const std::string preemption : {"recompute", "swap"}) {
    DYNAMIC_SECTION("preemption by " << preemption) {
      const auto outcome = servesim::run_simulation(
          soak_config(preemption), servesim::test::source_dir(), std::filesystem::current_path());
      const auto& stats = outcome.stats;
      const auto& summary = outcome.result.summary;
      INFO("arrived " << stats.arrived << ", preemptions " << summary.preemptions << ", events "
                      << stats.events);
      // A day of arrivals at 0.02 req/s: about 1,700 requests (1,758 with seed 11).
      CHECK(stats.arrived > 1400);
      CHECK(stats.end_time.seconds() > 0.9 * kDayS);
      // Everyone who arrived left, and the summary agrees with the event loop.
      CHECK(stats.finished + stats.rejected == stats.arrived);
      CHECK(summary.requests_completed == stats.finished);
      CHECK(summary.requests_rejected == stats.rejected);
      CHECK(stats.finished > stats.arrived / 2);
      // The small cache forces many preemptions.
      CHECK(summary.preemptions > 400);
      CHECK(std::isfinite(summary.e2e_s.mean));
    }
  }
}
