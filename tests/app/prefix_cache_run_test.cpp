#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

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
// A run, and the same run with ngram speculation (3 drafts, 60% accepted).
struct WithSpeculation {
  test::CliResult plain;
  test::CliResult fast;
  std::vector<std::string> speculating;  // the second run's arguments
};

WithSpeculation plain_and_speculating(const std::vector<std::string>& run) {
  WithSpeculation r{{}, {}, run};
  for (const char* arg :
       {"--speculative-config", R"({"method": "ngram", "num_speculative_tokens": 3})",
        "--acceptance-rate", "0.6"})
    r.speculating.push_back(arg);
  r.plain = test::run_servesim(run);
  r.fast = test::run_servesim(r.speculating);
  INFO(r.plain.err << r.fast.err);
  REQUIRE(r.plain.exit_code == 0);
  REQUIRE(r.fast.exit_code == 0);
  return r;
}

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
  if (!test::shared_data_path("traces/mooncake/conversation_trace.jsonl")) return;
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
  if (!test::shared_data_path("traces/mooncake/conversation_trace.jsonl")) return;
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

TEST_CASE("multi_turn sessions: every turn hits all earlier turns when nothing is evicted",
          "[app][prefix]") {
  // 100 sessions of 3 turns, 100 new user tokens and 50 output tokens a turn. Turn k's prompt
  // is the conversation so far: 100, 250, 400 tokens. A turn's last output token is never
  // computed, so a turn leaves floor((prompt + 50 - 1) / 16) full blocks: turn 2 hits 9 of
  // them (144 tokens), turn 3 18 (288).
  const test::ScratchDir scratch("multi_turn_hits");
  const auto path = scratch.write("chat.json", R"({"num_requests": 300,
      "arrival": {"process": "poisson", "rate_per_s": 2},
      "lengths": {"distribution": "multi_turn", "turns": {"distribution": "fixed", "count": 3},
                  "user": {"distribution": "fixed", "tokens": 100},
                  "output": {"distribution": "fixed", "tokens": 50},
                  "think_time": {"distribution": "fixed", "seconds": 2}}})");
  const auto out = scratch.path() / "out";
  const auto r = test::run_servesim(
      {"run", "--workload", path.string(), "--block-size", "16", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Per request: requests.csv's cached_tokens by prompt length.
  std::istringstream csv(test::read_file(out / "requests.csv"));
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  std::stringstream names(line);
  for (std::string name; std::getline(names, name, ',');)
    header.push_back(name);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t prompt = column("prompt_tokens");
  const std::size_t cached = column("cached_tokens");
  REQUIRE(cached < header.size());
  const std::map<std::int64_t, std::int64_t> expected{{100, 0}, {250, 144}, {400, 288}};
  std::int64_t rows = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t hit_tokens = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> fields;
    std::stringstream values(line);
    for (std::string value; std::getline(values, value, ',');)
      fields.push_back(value);
    const std::int64_t p = std::stoll(fields.at(prompt));
    REQUIRE(expected.count(p) == 1);
    CHECK(std::stoll(fields.at(cached)) == expected.at(p));
    ++rows;
    prompt_tokens += p;
    hit_tokens += expected.at(p);
  }
  CHECK(rows == 300);
  // The summary's rate is those hits over the prompt tokens (300 turns counted as they
  // arrive: the last sessions may not have reached their third turn).
  const auto summary = nlohmann::json::parse(test::read_file(out / "summary.json"));
  CHECK(
      summary["prefix_cache_hit_rate"].get<double>() ==
      Approx(static_cast<double>(hit_tokens) / static_cast<double>(prompt_tokens)).epsilon(1e-12));
  CHECK(2 * hit_tokens > prompt_tokens);
}

TEST_CASE("speculative decoding with prefix caching: hits as without, every token served",
          "[app][prefix][speculative]") {
  const test::ScratchDir scratch("spec_prefix");
  const auto path = scratch.write("spec.json", R"({"num_requests": 200,
      "arrival": {"process": "poisson", "rate_per_s": 10},
      "lengths": {"distribution": "shared_prefix", "groups": 4, "users_per_group": 5,
                  "system_prompt_tokens": 300, "question_tokens": 40, "output_tokens": 80}})");
  const std::vector<std::string> run = {"run",          "--workload", path.string(),
                                        "--block-size", "16",         "--json"};
  const auto [plain, fast, speculating] = plain_and_speculating(run);
  const auto p = plain.json();
  const auto s = fast.json();
  // Every request but each group's first hits the prompt's 18 full blocks (288 tokens).
  const double hit_rate = (200.0 - 4) * 288 / (200.0 * 340);
  CHECK(p["prefix_cache_hit_rate"].get<double>() == Approx(hit_rate));
  CHECK(s["prefix_cache_hit_rate"].get<double>() == Approx(hit_rate));
  CHECK(s["requests_completed"] == 200);
  CHECK(s["spec_decode"]["mean_tokens_per_step"].get<double>() > 1.5);
  CHECK(s["tpot_s"]["mean"].get<double>() < p["tpot_s"]["mean"].get<double>());
  // The same seed, the same run.
  CHECK(test::run_servesim(speculating).out == fast.out);
}

TEST_CASE("speculative steps name the blocks they compute: a conversation's next turn hits them",
          "[app][prefix][speculative]") {
  // One conversation at a time, so that every decode plan is speculative steps alone: the
  // next turn resends the earlier turns' outputs, which those steps computed.
  const test::ScratchDir scratch("spec_turns");
  const auto path = scratch.write("turns.json", R"({"num_requests": 60,
      "arrival": {"process": "poisson", "rate_per_s": 0.001},
      "lengths": {"distribution": "multi_turn",
        "turns": {"distribution": "lognormal", "mean": 4.0, "std": 1.0, "min": 2, "max": 8},
        "user": {"distribution": "lognormal", "mean": 70, "std": 30, "min": 1, "max": 400},
        "output": {"distribution": "lognormal", "mean": 200, "std": 50, "min": 20, "max": 600},
        "think_time": {"distribution": "lognormal", "mean_s": 5, "std_s": 2, "max_s": 30}}})");
  const WithSpeculation runs =
      plain_and_speculating({"run", "--workload", path.string(), "--json"});
  const test::CliResult& plain = runs.plain;
  const test::CliResult& fast = runs.fast;
  const double hits = plain.json()["prefix_cache_hit_rate"].get<double>();
  CHECK(hits > 0.5);  // later turns hit the conversation so far
  // The cache never fills: the same content is computed, so the same blocks are hit.
  CHECK(fast.json()["prefix_cache_hit_rate"].get<double>() == Approx(hits).epsilon(1e-12));
}
