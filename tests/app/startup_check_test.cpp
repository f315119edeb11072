// The engines' start-up checks (engines/*.json "startup", sim/app/startup_check.h): vLLM
// refuses a max_len whose one sequence does not fit the KV cache and names the longest that
// does (kv_cache_utils.py check_enough_kv_cache_memory, estimate_max_model_len); SGLang and
// TensorRT-LLM cut the length instead; block sizes and token limits the engines refuse.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "sim/app/config_assembly.h"
#include "sim/app/startup_check.h"
#include "sim/core/error.h"
#include "sim/memory/kv_capacity.h"
#include "sim/model/kv_spec.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// The KV bytes one GPU of Llama-3.1-70B at TP 2 on an H100 has for the cache, as `run` plans
// them with the vllm engine's defaults (1,024 sequences, 8,192-token activation reserve).
// vllm's start-up profile on an H100 at its defaults there (1,024 sequences, 8,192 tokens).
double llama70b_tp2_kv_bytes() {
  const EngineProfile vllm = test::shipped_engine("vllm");
  KvCapacityOptions o;
  o.parallelism = Parallelism{2, 1};
  o.max_sequences = 1024;
  o.max_batched_tokens = 8192;
  o.accounting = ActivationAccounting::ProfileRun;
  o.non_torch_bytes = vllm.scheduling.non_torch_bytes;
  o.sampler_bytes_per_logit = vllm.scheduling.sampler_bytes_per_logit;
  return plan_kv_capacity(test::shipped_model("llama-3.1-70b"), test::shipped_hardware("h100-sxm"),
                          o)
      .kv_bytes_per_gpu;
}

// 80 layers x 2 (K, V) x 4 of the 8 KV heads x 128 x 2 bytes on each of the two GPUs.
constexpr double kLlama70bBytesPerTokenPerGpu = 80.0 * 2 * 4 * 128 * 2;

StartupFacts llama70b_facts(std::int64_t max_len, std::int64_t block_tokens) {
  StartupFacts f;
  f.engine = "vllm";
  f.deployment = "llama-3.1-70b on h100-sxm at TP 2";
  f.max_len_tokens = max_len;
  f.kv_bytes_per_gpu = llama70b_tp2_kv_bytes();
  f.groups_per_gpu =
      kv_groups_per_gpu(test::shipped_model("llama-3.1-70b"), Parallelism{2, 1}, DType::BF16);
  f.pools = kv_pool_layout(f.groups_per_gpu, block_tokens);
  f.block_tokens = block_tokens;
  return f;
}

StartupChecks vllm_checks() {
  return test::shipped_engine("vllm").startup;
}

nlohmann::json document(const std::vector<std::string>& sets) {
  ConfigSources sources;
  for (const auto& set : sets)
    sources.overrides.push_back({"--set", set});
  return assemble_config(sources, test::source_dir());
}

}  // namespace

TEST_CASE("one max_len sequence needs whole blocks of every layer, as vLLM counts it",
          "[startup]") {
  const StartupFacts f = llama70b_facts(131072, 16);
  REQUIRE(kv_slot_bytes_per_token(f.groups_per_gpu) == kLlama70bBytesPerTokenPerGpu);
  CHECK(max_kv_bytes_per_sequence(f, 16) == 16 * kLlama70bBytesPerTokenPerGpu);
  CHECK(max_kv_bytes_per_sequence(f, 17) == 32 * kLlama70bBytesPerTokenPerGpu);
  // 131,072 tokens: 20 GiB per GPU.
  CHECK(max_kv_bytes_per_sequence(f, 131072) == 131072 * kLlama70bBytesPerTokenPerGpu);
  CHECK(max_kv_bytes_per_sequence(f, 131072) / 1073741824.0 == Approx(20.0));
}

TEST_CASE("vLLM refuses Llama-3.1-70B at TP 2 with its default length and names about 4k",
          "[startup]") {
  const StartupFacts f = llama70b_facts(131072, 16);
  // The largest length whose whole blocks fit: every block of 16 tokens that fits.
  const double block_bytes = 16 * kLlama70bBytesPerTokenPerGpu;
  const auto expected =
      static_cast<std::int64_t>(std::floor(*f.kv_bytes_per_gpu / block_bytes)) * 16;
  CHECK(largest_max_len_that_fits(f, *f.kv_bytes_per_gpu) == expected);
  // 1,024 sequences' sampler run leaves about 0.7 GiB of KV per GPU.
  CHECK(expected > 4000);
  CHECK(expected < 5000);
  CHECK(largest_max_len_that_fits(f, block_bytes - 1) == 0);
  CHECK(largest_max_len_that_fits(f, block_bytes) == 16);

  try {
    apply_startup_checks(vllm_checks(), f);
    FAIL("expected vllm to refuse");
  } catch (const InfeasibleError& e) {
    CHECK_THAT(e.what(),
               Contains("vllm does not start") && Contains("131072") &&
                   Contains("the largest max_len that fits is " + std::to_string(expected)));
  }
  // The length it names starts; one more token does not.
  CHECK(apply_startup_checks(vllm_checks(), llama70b_facts(expected, 16)) == expected);
  CHECK_THROWS_AS(apply_startup_checks(vllm_checks(), llama70b_facts(expected + 1, 16)),
                  InfeasibleError);
  CHECK(apply_startup_checks(vllm_checks(), llama70b_facts(4096, 16)) == 4096);
}

TEST_CASE("SGLang and TensorRT-LLM cut the length to their KV pool instead", "[startup]") {
  StartupFacts f = llama70b_facts(131072, 1);
  const auto tokens =
      static_cast<std::int64_t>(std::floor(*f.kv_bytes_per_gpu / kLlama70bBytesPerTokenPerGpu));
  // SGLang: max_req_len = pool tokens - 1 (page size 1).
  CHECK(apply_startup_checks(test::shipped_engine("sglang").startup, f) == tokens - 1);
  // TensorRT-LLM: the tokens of its whole blocks of 64.
  f = llama70b_facts(131072, 64);
  CHECK(apply_startup_checks(test::shipped_engine("trtllm").startup, f) == tokens / 64 * 64);
  // A length that fits is kept.
  CHECK(apply_startup_checks(test::shipped_engine("sglang").startup, llama70b_facts(4096, 1)) ==
        4096);
  // No room for one token: SGLang's "Memory pool size is too small".
  f = llama70b_facts(131072, 1);
  f.kv_bytes_per_gpu = kLlama70bBytesPerTokenPerGpu;
  CHECK_THROWS_AS(apply_startup_checks(test::shipped_engine("sglang").startup, f), InfeasibleError);
}

TEST_CASE("block sizes the engines refuse", "[startup]") {
  const auto refused = [](const std::string& engine, std::int64_t block) {
    try {
      apply_startup_checks(test::shipped_engine(engine).startup, llama70b_facts(2048, block));
      return false;
    } catch (const InputError& e) {  // a knob the engine refuses: bad input, exit 3
      CHECK_THAT(e.what(), Contains("allocator.block_size: "));
      CHECK_THAT(e.what(), Contains("block_size " + std::to_string(block)));
      return true;
    }
  };
  // vLLM on CUDA (FlashAttention): 16, 32, 64, 128, 256.
  CHECK(refused("vllm", 1));
  CHECK(refused("vllm", 8));
  CHECK(refused("vllm", 48));
  CHECK_FALSE(refused("vllm", 16));
  CHECK_FALSE(refused("vllm", 256));
  // vLLM V0: 8, 16, 32.
  CHECK_FALSE(refused("vllm-v0", 8));
  CHECK(refused("vllm-v0", 64));
  // TensorRT-LLM: powers of two from 2.
  CHECK(refused("trtllm", 1));
  CHECK(refused("trtllm", 48));
  CHECK_FALSE(refused("trtllm", 2));
  CHECK_FALSE(refused("trtllm", 128));
  // SGLang: any page size.
  CHECK_FALSE(refused("sglang", 1));
  CHECK_FALSE(refused("sglang", 48));
}

TEST_CASE("vLLM refuses a token limit below max_num_seqs", "[startup]") {
  StartupFacts f = llama70b_facts(4096, 16);
  f.max_num_seqs = 1024;
  f.max_num_batched_tokens = 1023;
  CHECK_THROWS_AS(apply_startup_checks(vllm_checks(), f), InputError);
  CHECK_THROWS_WITH(apply_startup_checks(vllm_checks(), f),
                    Contains("max_num_batched_tokens (1023) must be at least max_num_seqs (1024)"));
  f.max_num_batched_tokens = 1024;
  CHECK(apply_startup_checks(vllm_checks(), f) == 4096);
  // SGLang does not make this check.
  f.max_num_batched_tokens = 1;
  CHECK(apply_startup_checks(test::shipped_engine("sglang").startup, f) == 4096);
}

TEST_CASE("startup_verdict answers for a configuration document", "[startup]") {
  const StartupVerdict refused = startup_verdict(
      document({"model=llama-3.1-70b", "hardware=h100-sxm", "tp=2"}), test::source_dir());
  CHECK_FALSE(refused.starts);
  CHECK_THAT(refused.reason, Contains("vllm does not start") && Contains("largest max_len"));

  const StartupVerdict starts = startup_verdict(
      document({"model=llama-3.1-70b", "hardware=h100-sxm", "tp=2", "max_len=4096"}),
      test::source_dir());
  CHECK(starts.starts);
  CHECK(starts.max_len_tokens == 4096);

  // Weights that do not fit at all: the planner's own refusal, as a verdict.
  const StartupVerdict too_big = startup_verdict(
      document({"model=llama-3.1-70b", "hardware=h100-sxm", "tp=1"}), test::source_dir());
  CHECK_FALSE(too_big.starts);
  CHECK_THAT(too_big.reason, Contains("does not fit"));

  // SGLang starts, with the length cut.
  const StartupVerdict sglang = startup_verdict(
      document({"model=llama-3.1-70b", "hardware=h100-sxm", "tp=2", "engine.name=sglang"}),
      test::source_dir());
  CHECK(sglang.starts);
  // (its 0.88 of memory and 1,024 sequences' logits leave about half of vLLM's room)
  CHECK(sglang.max_len_tokens < 131072);
  CHECK(sglang.max_len_tokens > 5000);

  // A capacity given in the configuration is not checked against a sequence.
  const StartupVerdict given = startup_verdict(document({"model=llama-3.1-70b", "hardware=h100-sxm",
                                                         "tp=2", "memory.kv_capacity_tokens=1000"}),
                                               test::source_dir());
  CHECK(given.starts);
}

TEST_CASE("run exits 4 for Llama-3.1-70B on two H100s at its default length", "[startup][cli]") {
  const auto refused =
      test::run_servesim({"run", "--model", "llama-3.1-70b", "--hw", "h100-sxm", "--tp", "2"});
  test::require_error(refused, 4, "vllm does not start: one sequence of max_len 131072");
  const std::int64_t named =
      largest_max_len_that_fits(llama70b_facts(131072, 16), llama70b_tp2_kv_bytes());
  CHECK_THAT(refused.err, Contains("the largest max_len that fits is " + std::to_string(named)));

  const auto runs =
      test::run_servesim({"run", "--model", "llama-3.1-70b", "--hw", "h100-sxm", "--tp", "2",
                          "--max-model-len", "4096", "--num-requests", "20", "--json"});
  INFO(runs.err);
  REQUIRE(runs.exit_code == 0);
  CHECK(runs.json()["requests_completed"] == 20);
}
