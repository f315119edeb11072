// A deployment the engine refuses to start is a study row of its own: "does not start",
// not "does not fit", with the engine's reason.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/study/point_simulation.h"
#include "tests/support/test_support.h"

namespace {

using Catch::Contains;
using servesim::test::run_servesim;

TEST_CASE("a point's unfit text says whether the engine refused to start it", "[study]") {
  const nlohmann::json unfit{{"does_not_fit", "the model does not fit on L4 at TP 1"}};
  CHECK(servesim::unfit_text(unfit) == "does not fit: the model does not fit on L4 at TP 1");
  const nlohmann::json refused{{"does_not_fit", "vllm does not start: one sequence needs more"},
                               {"does_not_start", true}};
  CHECK(servesim::unfit_text(refused) == "does not start: one sequence needs more (vllm)");
}

// Llama-3.1-70B at vLLM's default max_model_len (131,072) does not start on two H100s (its KV
// pool holds about 21k tokens of one sequence) and does on four.
TEST_CASE("capacity and sweep list a shape vLLM would not start as does not start",
          "[study][cli]") {
  const std::vector<std::string> load{"--model",         "llama-3.1-70b", "--num-requests",  "100",
                                      "--prompt-tokens", "256",           "--output-tokens", "32"};
  std::vector<std::string> capacity{"capacity",   "--target-rate",         "1",
                                    "--shapes",   "h100-sxm:2,h100-sxm:4", "--slo",
                                    "ttft_p99=5", "--max-replicas",        "2"};
  capacity.insert(capacity.end(), load.begin(), load.end());
  const auto table = run_servesim(capacity);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("does not start: one sequence of max_len 131072") &&
                            Contains("(vllm)") && !Contains("does not fit"));
  capacity.push_back("--json");
  const auto json = run_servesim(capacity).json();
  const auto& refused = json["shapes"][0];
  CHECK(refused["replicas"].is_null());
  CHECK(refused["does_not_start"] == true);
  CHECK_THAT(refused["does_not_fit"].get<std::string>(), Contains("largest max_len that fits"));
  CHECK(json["shapes"][1]["replicas"] == 1);

  std::vector<std::string> sweep{"sweep", "--grid", "tp=2,4", "--no-plots"};
  sweep.insert(sweep.end(), load.begin(), load.end());
  const auto rows = run_servesim(sweep);
  REQUIRE(rows.exit_code == 0);
  CHECK_THAT(rows.out, Contains("does not start: one sequence of max_len 131072"));
}

}  // namespace
