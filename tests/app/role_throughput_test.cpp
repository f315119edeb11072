// Rate matching's figures for one replica (sim/app/role_throughput.h): the decode batch its
// limits allow, the step-time limit, and prefill steps filled to the token budget.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/app/app.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;

namespace {

nlohmann::json config_with(const std::vector<std::string>& settings) {
  ConfigSources sources;
  for (const auto& setting : settings)
    sources.overrides.push_back({"test", setting});
  return assemble_config(sources, test::source_dir());
}

}  // namespace

TEST_CASE("a replica decodes at the batch its KV capacity holds, within the step limit", "[app]") {
  // 11,008 tokens of KV (688 blocks of 16) hold 10 sequences of a 1,000-token prompt and
  // half a 200-token output; max_num_seqs does not bind.
  const auto config = config_with({"memory.kv_capacity_tokens=11008"});
  const RoleThroughput free = role_throughput(config, test::source_dir(), {1000, 200, {}});
  CHECK(free.decode_batch == 10);
  CHECK(free.gpus_per_replica == 1);
  CHECK(free.decode_tokens_per_s == Approx(10 / free.decode_step_s));

  // A limit just under that step leaves the largest batch whose step is within it.
  const double limit_s = free.decode_step_s * (1 - 1e-9);
  const RoleThroughput limited = role_throughput(config, test::source_dir(), {1000, 200, limit_s});
  CHECK(limited.decode_batch == 9);
  CHECK(limited.decode_step_s <= limit_s);
  CHECK(limited.decode_tokens_per_s < free.decode_tokens_per_s);
  // A limit no step meets leaves one sequence.
  CHECK(role_throughput(config, test::source_dir(), {1000, 200, 1e-9}).decode_batch == 1);

  // max_num_seqs binds when it is the smaller.
  const auto few = config_with({"scheduler.max_num_seqs=4"});
  CHECK(role_throughput(few, test::source_dir(), {1000, 200, {}}).decode_batch == 4);
}

TEST_CASE("a replica prefills whole prompts to its token budget, a longer one in chunks", "[app]") {
  const auto config = config_with({"scheduler.max_num_batched_tokens=8192"});
  // Eight 1,000-token prompts a step share one pass over the weights; one alone does not.
  const double batched =
      role_throughput(config, test::source_dir(), {1000, 1, {}}).prefill_tokens_per_s;
  const auto one =
      config_with({"scheduler.max_num_batched_tokens=1000", "scheduler.max_num_seqs=8"});
  const double alone = role_throughput(one, test::source_dir(), {1000, 1, {}}).prefill_tokens_per_s;
  CHECK(batched > alone);
  // A 32,768-token prompt in 8,192-token chunks: its later chunks attend to the earlier ones,
  // so it prefills fewer tokens a second than 8,192-token prompts do.
  const double chunked =
      role_throughput(config, test::source_dir(), {32768, 1, {}}).prefill_tokens_per_s;
  const double budget_sized =
      role_throughput(config, test::source_dir(), {8192, 1, {}}).prefill_tokens_per_s;
  CHECK(chunked < budget_sized);
  // Four GPUs prefill faster than one.
  const auto tp4 = config_with({"scheduler.max_num_batched_tokens=8192", "tp=4"});
  const RoleThroughput wide = role_throughput(tp4, test::source_dir(), {1000, 1, {}});
  CHECK(wide.gpus_per_replica == 4);
  CHECK(wide.prefill_tokens_per_s > batched);
}

TEST_CASE("rate matching refuses what a run refuses", "[app]") {
  // Llama-3.1-70B's weights do not fit one H100.
  const auto config = config_with({"model=\"llama-3.1-70b\""});
  CHECK_THROWS_AS(role_throughput(config, test::source_dir(), {1000, 200, {}}), InfeasibleError);
}
