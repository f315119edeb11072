// The shipped vLLM 0.15.1 setup against its measured load stages: the figures
// docs/validation.md reports, held so that a change to the workload, the scheduler, the cost
// model or the vllm engine that moves them is seen.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "tests/support/test_support.h"

using namespace servesim;

TEST_CASE("vLLM 0.15.1 on H100 under load: the mean latencies and the overloaded stages",
          "[serving_validate][shared_data]") {
  const auto shared = test::shared_data_path("measured/vllm-0.15.1-h100-sxm.csv");
  if (!shared) return;
  const std::filesystem::path& file = *shared;
  const auto r = test::run_servesim({"validate", "--measured", file.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  const auto& metrics = j.at("metrics");
  for (const char* metric : {"ttft_ms_mean", "itl_ms_mean", "e2e_ms_mean"}) {
    INFO(metric);
    CHECK(metrics.at(metric).at("count") == 20);
    CHECK(metrics.at(metric).at("median_ape").get<double>() <= 0.09);
  }
  CHECK(metrics.at("ttft_ms_mean").at("mape").get<double>() <= 0.10);
  CHECK(metrics.at("itl_ms_mean").at("mape").get<double>() <= 0.06);
  CHECK(metrics.at("e2e_ms_mean").at("mape").get<double>() <= 0.06);
  // The four reasoning stages are measured overloaded and predicted so; no other stage is.
  for (const auto& p : j.at("points")) {
    INFO(p.at("row") << " " << p.at("workload"));
    const bool reasoning = p.at("workload") == "reasoning";
    CHECK(p.at("measured_overloaded") == reasoning);
    CHECK(p.at("predicted_overloaded") == reasoning);
    // Every stage within 10% in ITL but Llama-2-7B's at 20 req/s, near its saturation
    // (docs/validation.md).
    const bool saturated_7b =
        p.at("model") == "meta-llama/Llama-2-7b-hf" && p.at("rate_per_s") == 20;
    if (!reasoning && !saturated_7b) {
      CHECK(std::abs(p.at("metrics").at("itl_ms_mean").at("relative_error").get<double>()) < 0.10);
    }
  }
}
