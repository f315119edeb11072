// The shipped TensorRT-LLM 0.9.0 setup against its measured static batches: the figures
// docs/validation.md reports, held so that a change to the cost model, the h200 / h100-sxm
// profiles or the trtllm engine that moves them is seen.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "tests/support/test_support.h"

using namespace servesim;

TEST_CASE("TensorRT-LLM 0.9.0 static FP8 batches: output throughput within the issue's 10% MAPE",
          "[serving_validate][shared_data]") {
  const auto shared = test::shared_data_path("measured/trtllm-0.9.0-static-fp8.csv");
  if (!shared) return;
  const std::filesystem::path& file = *shared;
  // The default setup (validation/setups/trtllm-0.9.0-static-fp8.json): engine trtllm,
  // FP8 weights and KV cache, the whole memory for the batch's contiguous cache.
  const auto r = test::run_servesim({"validate", "--measured", file.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  const auto& stats = j.at("metrics").at("output_tokens_per_s_per_gpu");
  CHECK(stats.at("count") == 19);
  CHECK(stats.at("mape").get<double>() <= 0.05);  // the issue asks for 10%
  CHECK(stats.at("median_ape").get<double>() <= 0.04);
  CHECK(stats.at("max_ape").get<double>() <= 0.10);
  double mistral = 0, llama7 = 0, llama70 = 0;
  for (const auto& p : j.at("points")) {
    INFO(p.dump());
    const double error =
        p.at("metrics").at("output_tokens_per_s_per_gpu").at("relative_error").get<double>();
    const std::string model = p.at("model");
    if (model == "mistral-7b") mistral += std::abs(error) / 8;
    if (model == "llama-2-7b") llama7 += std::abs(error) / 7;
    if (model == "llama-2-70b") llama70 += std::abs(error) / 4;
    // Llama-2-7B's 120 x (128 + 2048) tokens fit one H100 only with the FP8 cache and the
    // whole memory; a second batch would halve the throughput.
    if (model == "llama-2-7b" && p.at("hardware") == "h100-sxm" &&
        p.at("workload") == "batch 120 x 128/2048") {
      CHECK(std::abs(error) < 0.10);
    }
  }
  // The two 7B models the CUDA-core attention terms were fitted on, and Llama-2-70B, in no
  // fit (docs/validation.md).
  CHECK(mistral < 0.04);
  CHECK(llama7 < 0.04);
  CHECK(llama70 < 0.05);
}
