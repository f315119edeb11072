#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using namespace servesim;

namespace {

using Args = std::vector<std::string>;

test::CliResult run_with(const std::string& speculative, const Args& more = {}) {
  Args args = {"run", "--num-requests",       "30",       "--json", "--acceptance-rate",
               "0.6", "--speculative-config", speculative};
  args.insert(args.end(), more.begin(), more.end());
  return test::run_servesim(args);
}

std::string summary(const std::string& speculative, const Args& more = {}) {
  const auto r = run_with(speculative, more);
  INFO(speculative << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("speculative-config takes vLLM's other keys: used, recorded or refused by name",
          "[speculative][vllm]") {
  const std::string ngram = R"({"method": "ngram", "num_speculative_tokens": 3)";
  // The ngram match window only shapes the acceptance, which is given: the same run.
  CHECK(summary(ngram + R"(, "prompt_lookup_max": 4, "prompt_lookup_min": 2})") ==
        summary(ngram + "}"));
  // ... and resolved_config.json records it.
  test::ScratchDir dir("speculative_vllm_keys");
  const auto out = dir.path() / "out";
  REQUIRE(run_with(ngram + R"(, "prompt_lookup_max": 4, "revision": "main"})",
                   {"--out", out.string(), "--no-plots"})
              .exit_code == 0);
  const auto config = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
  CHECK(config["speculative"]["prompt_lookup_max"] == 4);
  CHECK(config["speculative"]["revision"] == "main");

  // The draft's TP is the target's, as servesim shards it.
  const std::string draft =
      R"({"method": "draft_model", "model": "llama-3-8b", "num_speculative_tokens": 3)";
  const Args target = {"--model", "llama-3-70b", "--tp", "4"};
  CHECK(summary(draft + R"(, "draft_tensor_parallel_size": 4})", target) ==
        summary(draft + "}", target));
  test::require_error(run_with(draft + R"(, "draft_tensor_parallel_size": 1})", target), 3,
                      "speculative.draft_tensor_parallel_size: 1: a proposer on other GPUs than "
                      "the target's 4 is not modelled");
  test::require_error(run_with(ngram + R"(, "disable_by_batch_size": 8})"), 3,
                      "disable_by_batch_size\": vLLM's key is not modelled by servesim");
  test::require_error(
      run_with(R"({"method": "eagle", "num_speculative_tokens": 3, "prompt_lookup_max": 4})"), 3,
      "prompt_lookup_max\": only with method ngram");
  test::require_error(run_with(ngram + R"(, "prompt_lookup_max": 2, "prompt_lookup_min": 3})"), 3,
                      "expected at most prompt_lookup_max (2), got 3");
}
