// Sizes one machine cannot simulate are refused at once, one line, exit 3.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "sim/app/simulation_limits.h"
#include "tests/support/test_support.h"

using namespace servesim;

namespace {

// Refused within a second (the refusal comes before anything is built).
void refused_at_once(const std::vector<std::string>& args, const std::string& needle) {
  const auto start = std::chrono::steady_clock::now();
  test::require_error(test::run_servesim(args), 3, needle);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

}  // namespace

TEST_CASE("huge sizes are refused with the limit and the reason", "[limits]") {
  refused_at_once({"run", "--replicas", "1000000000"},
                  "replicas: expected at most 4,096 (replicas one machine simulates");
  refused_at_once({"run", "--num-requests", "1000000000"},
                  "workload.num_requests: expected at most 100,000,000");
  refused_at_once({"run", "--prompt-tokens", "5000000000", "--output-tokens", "10"},
                  "workload.lengths.prompt.tokens: expected at most 1,073,741,824");
  refused_at_once({"run", "--kv-capacity-tokens", "100000000000000"},
                  "memory.kv_capacity_tokens: expected at most 68,719,476,736");
}

TEST_CASE("sizes at the limits are not refused by it", "[limits]") {
  RunConfig config;
  config.replicas = kMaxReplicas;
  config.workload = {{"num_requests", kMaxRequests},
                     {"lengths", {{"prompt", {{"distribution", "fixed"}, {"tokens", 1 << 30}}}}}};
  CHECK_NOTHROW(check_simulation_limits(config));
  config.replicas = kMaxReplicas + 1;
  CHECK_THROWS(check_simulation_limits(config));
}
