#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/workload/prefix_reuse.h"
#include "sim/workload/trace_reader.h"
#include "tests/support/test_support.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;

namespace {

constexpr std::int64_t kMaxLen = 131072;  // llama-3.1-8b's max_position_embeddings

std::filesystem::path mooncake(const std::string& file) {
  return test::shared_data_dir() / "traces" / "mooncake" / file;
}

// A Mooncake trace's rows [0, rows) as the lengths, one request every 100 s: each is served
// before the next arrives, so every block a request holds is computed before the next looks.
std::string spaced_spec(const std::filesystem::path& trace, std::int64_t rows) {
  return R"({"arrival": {"process": "constant", "rate_per_s": 0.01}, "num_requests": )" +
         std::to_string(rows) + R"(, "lengths": {"distribution": "trace"}, "trace": {"path": ")" +
         trace.string() + R"(", "end_row": )" + std::to_string(rows) + "}}";
}

// The hit ratio an unbounded cache gives on the requests a run serves (prompts of max_len or
// more are rejected and never reach the cache), from the workload's content alone.
double unbounded_hit_ratio(const std::string& spec_text, std::int64_t block_tokens) {
  const auto source = make_workload_source(test::spec_from_text(spec_text), RngStreams(1));
  UnboundedPrefixReuse reuse(block_tokens);
  while (const auto request = source->next()) {
    if (request->prompt_tokens >= kMaxLen) continue;
    const auto content = source->last_content();
    REQUIRE(content);
    reuse.add(*content, request->prompt_tokens);
  }
  return reuse.hit_ratio();
}

nlohmann::json run_summary(const std::filesystem::path& workload,
                           const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run",
                                   "--model",
                                   "llama-3.1-8b",
                                   "--hw",
                                   "h100-sxm",
                                   "--workload",
                                   workload.string(),
                                   "--max-len",
                                   std::to_string(kMaxLen),
                                   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::run_servesim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.json();
}

}  // namespace

TEST_CASE("Mooncake traces: a cache that outlives the trace hits what the hash ids share",
          "[app][prefix]") {
  if (!std::filesystem::exists(mooncake("conversation_trace.jsonl"))) {
    WARN("shared Mooncake traces absent: skipped");
    return;
  }
  const test::ScratchDir scratch("mooncake_hits");
  for (const char* file : {"conversation_trace.jsonl", "synthetic_trace.jsonl"}) {
    INFO(file);
    const std::string spec = spaced_spec(mooncake(file), 1500);
    const auto path = scratch.write("spec.json", spec);
    // 40M token slots hold every block of the 1,500 requests: nothing is ever evicted.
    const auto summary =
        run_summary(path, {"--set", "memory.kv_capacity_tokens=40000000", "--block-size", "16"});
    const double expected = unbounded_hit_ratio(spec, 16);
    CHECK(expected > 0.2);
    CHECK(summary["prefix_cache_hit_rate"].get<double>() == Approx(expected).epsilon(1e-12));
  }
}

TEST_CASE("Mooncake conversation trace: a smaller cache hits less, and caching cuts TTFT",
          "[app][prefix]") {
  if (!std::filesystem::exists(mooncake("conversation_trace.jsonl"))) {
    WARN("shared Mooncake traces absent: skipped");
    return;
  }
  // The first 2,000 rows at their own times, on the engine default (vllm: caching on).
  const test::ScratchDir scratch("mooncake_sizes");
  const auto path = scratch.write(
      "spec.json", R"({"arrival": {"process": "trace"}, "lengths": {"distribution": "trace"},
      "trace": {"path": ")" +
                       mooncake("conversation_trace.jsonl").string() + R"(", "end_row": 2000}})");
  double previous = 1.0;
  for (const char* capacity : {"40000000", "2000000", "500000"}) {
    INFO("capacity " << capacity);
    const auto summary =
        run_summary(path, {"--set", std::string("memory.kv_capacity_tokens=") + capacity});
    const double hit_rate = summary["prefix_cache_hit_rate"].get<double>();
    CHECK(hit_rate <= previous);
    previous = hit_rate;
  }
  CHECK(previous < 0.9 * unbounded_hit_ratio(R"({"arrival": {"process": "trace"},
      "lengths": {"distribution": "trace"}, "trace": {"path": ")" +
                                                 mooncake("conversation_trace.jsonl").string() +
                                                 R"(", "end_row": 2000}})",
                                             16));
  const auto on = run_summary(path, {"--set", "memory.kv_capacity_tokens=2000000"});
  const auto off = run_summary(
      path, {"--set", "memory.kv_capacity_tokens=2000000", "--no-enable-prefix-caching"});
  CHECK(off["prefix_cache_hit_rate"].get<double>() == 0.0);
  CHECK(on["ttft_s"]["mean"].get<double>() < off["ttft_s"]["mean"].get<double>());
}
