#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using namespace servesim;

namespace {

// The events a run processed, from the console's "Simulated N events" line.
long long events_of(const std::string& out) {
  const auto at = out.find("Simulated ");
  REQUIRE(at != std::string::npos);
  return std::stoll(out.substr(at + 10));
}

struct Outcome {
  long long events = 0;  // 1 when bulk decoding processed fewer events
  long long bulk_events = 0;
  long long step_events = 0;
  long long preempting_iterations = 0;  // iterations.csv's rows with preempted > 0
  long long prefill_iterations = 0;     // rows with prefill_tokens > 0
};

// The cells of one CSV line.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');)
    cells.push_back(cell);
  return cells;
}

struct Rows {
  long long preempting = 0;  // preempted > 0
  long long prefill = 0;     // prefill_tokens > 0
};

// The rows of an iterations.csv that preempt, and those that prefill.
Rows counted_rows(const std::string& csv) {
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = cells_of(line);
  const auto column = [&header](const char* name) {
    const auto at =
        static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    REQUIRE(at < header.size());
    return at;
  };
  const std::size_t preempted = column("preempted");
  const std::size_t prefill = column("prefill_tokens");
  Rows rows;
  while (std::getline(lines, line)) {
    const std::vector<std::string> cells = cells_of(line);
    rows.preempting += std::stoll(cells.at(preempted)) > 0 ? 1 : 0;
    rows.prefill += std::stoll(cells.at(prefill)) > 0 ? 1 : 0;
  }
  return rows;
}

const std::vector<std::string> kEveryOutput = {"summary.json", "requests.csv", "iterations.csv"};

// Runs `args` with bulk decoding on and off and compares the output files byte for byte
// (resolved_config.json up to the engine.bulk_decode key itself).
Outcome check_both_ways(const std::string& name, std::vector<std::string> args,
                        const std::vector<std::string>& files = kEveryOutput) {
  const test::ScratchDir scratch("bulk_" + name);
  const auto bulk_dir = scratch.path() / "bulk";
  const auto step_dir = scratch.path() / "step";
  args.insert(args.begin(), "run");
  auto bulk_args = args;
  bulk_args.insert(bulk_args.end(), {"--out", bulk_dir.string()});
  auto step_args = args;
  step_args.insert(step_args.end(), {"--out", step_dir.string(), "--no-bulk-decode"});
  const auto bulk = test::run_servesim(bulk_args);
  const auto step = test::run_servesim(step_args);
  INFO(name << ": " << bulk.err << step.err);
  REQUIRE(bulk.exit_code == 0);
  REQUIRE(step.exit_code == 0);
  for (const std::string& file : files) {
    INFO(name << ": " << file);
    const std::string a = test::read_file(bulk_dir / file);
    CHECK(a.size() > 100);
    CHECK(a == test::read_file(step_dir / file));
  }
  auto bulk_config = nlohmann::json::parse(test::read_file(bulk_dir / "resolved_config.json"));
  auto step_config = nlohmann::json::parse(test::read_file(step_dir / "resolved_config.json"));
  CHECK(bulk_config["engine"]["bulk_decode"] == true);
  CHECK(step_config["engine"]["bulk_decode"] == false);
  bulk_config.erase("engine");
  step_config.erase("engine");
  CHECK(bulk_config == step_config);
  const long long bulk_events = events_of(bulk.out);
  const long long step_events = events_of(step.out);
  CHECK(bulk_events <= step_events);
  Rows rows;
  if (std::find(files.begin(), files.end(), "iterations.csv") != files.end()) {
    rows = counted_rows(test::read_file(bulk_dir / "iterations.csv"));
  }
  return {bulk_events < step_events ? 1 : 0, bulk_events, step_events, rows.preempting,
          rows.prefill};
}

std::vector<std::string> workload(const std::string& requests, const std::string& rate) {
  return {"--workload", "sharegpt", "--num-requests", requests, "--rate", rate, "--seed", "3"};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("bulk decoding gives byte-identical outputs: vllm, paged, recompute and swap",
          "[cluster][bulk]") {
  // Tight KV memory, so that requests are preempted, by recompute and then by swap.
  long long fewer_events = 0;
  fewer_events +=
      check_both_ways("vllm_recompute",
                      workload("300", "12") + std::vector<std::string>{"--kv-capacity-tokens",
                                                                       "5000", "--replicas", "2",
                                                                       "--scheduler", "vllm"})
          .events;
  fewer_events +=
      check_both_ways("vllm_swap",
                      workload("200", "12") +
                          std::vector<std::string>{"--kv-capacity-tokens", "4000", "--scheduler",
                                                   "vllm", "--preemption", "swap"})
          .events;
  fewer_events +=
      check_both_ways("vllm_all_at_once",
                      workload("200", "inf") +
                          std::vector<std::string>{"--replicas", "3", "--scheduler", "vllm"})
          .events;
  CHECK(fewer_events == 3);  // bulk decoding did happen in each
}

TEST_CASE(
    "bulk decoding gives byte-identical outputs: orca, sarathi, static on paged and contiguous",
    "[cluster][bulk]") {
  check_both_ways("orca_contiguous",
                  workload("200", "10") +
                      std::vector<std::string>{"--scheduler", "orca", "--allocator", "contiguous",
                                               "--reservation", "pow2", "--kv-capacity-tokens",
                                               "12000", "--max-len", "2048"});
  check_both_ways(
      "orca_paged",
      workload("200", "10") + std::vector<std::string>{"--scheduler", "orca", "--allocator",
                                                       "paged", "--kv-capacity-tokens", "5000"});
  check_both_ways("sarathi_paged",
                  workload("200", "10") + std::vector<std::string>{"--scheduler", "sarathi",
                                                                   "--kv-capacity-tokens", "5000",
                                                                   "--replicas", "2"});
  check_both_ways("sarathi_contiguous",
                  workload("200", "10") + std::vector<std::string>{
                                              "--scheduler", "sarathi", "--allocator", "contiguous",
                                              "--reservation", "oracle", "--placement", "first_fit",
                                              "--kv-capacity-tokens", "12000"});
  check_both_ways("static_paged",
                  workload("150", "10") + std::vector<std::string>{"--scheduler", "static"});
  check_both_ways(
      "static_contiguous",
      workload("150", "10") + std::vector<std::string>{"--scheduler", "static", "--allocator",
                                                       "contiguous", "--max-len", "2048"});
}

TEST_CASE("bulk decoding gives byte-identical outputs: vllm_v1", "[cluster][bulk]") {
  const std::vector<std::string> v1 = {"--scheduler", "vllm_v1"};
  long long fewer_events = 0;
  // Preemption under tight memory.
  fewer_events +=
      check_both_ways("vllm_v1_pressure", workload("300", "12") + v1 +
                                              std::vector<std::string>{"--kv-capacity-tokens",
                                                                       "5000", "--replicas", "2"})
          .events;
  // A budget the decodes and chunks share, and one the seats use up exactly.
  fewer_events +=
      check_both_ways("vllm_v1_budget", workload("200", "20") + v1 +
                                            std::vector<std::string>{"--max-batched-tokens", "256",
                                                                     "--max-num-seqs", "64"})
          .events;
  fewer_events +=
      check_both_ways("vllm_v1_seats", workload("200", "20") + v1 +
                                           std::vector<std::string>{"--max-batched-tokens", "16",
                                                                    "--max-num-seqs", "16"})
          .events;
  // Several prompts partially prefilled at once.
  fewer_events += check_both_ways("vllm_v1_threshold",
                                  workload("200", "20") + v1 +
                                      std::vector<std::string>{
                                          "--set", "scheduler.max_num_partial_prefills=4",
                                          "--max-len", "4096", "--kv-capacity-tokens", "8000"})
                      .events;
  CHECK(fewer_events == 4);  // bulk decoding did happen in each
}

TEST_CASE("bulk decoding runs through the rounds that preempt: the default engine",
          "[cluster][bulk]") {
  // The default engine (vllm_v1, prefix caching, planning ahead) at overload with long
  // outputs: memory runs out every few rounds and the newest requests are preempted to
  // recompute later; decode runs go on through those rounds.
  const std::vector<std::string> thrash = {"--prompt-tokens", "160", "--output-tokens",     "1500",
                                           "--rate",          "200", "--num-requests",      "300",
                                           "--seed",          "3",   "--kv-capacity-tokens"};
  const std::vector<std::vector<std::string>> variants = {
      {"40000"},
      {"40000", "--no-enable-prefix-caching"},
      {"40000", "--max-batched-tokens", "1024"},
      {"20000", "--max-num-seqs", "24", "--replicas", "2"},
  };
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const Outcome o = check_both_ways("thrash_" + std::to_string(i), thrash + variants[i]);
    INFO("variant " << i << ": " << o.bulk_events << " events, " << o.preempting_iterations
                    << " iterations preempt, " << o.prefill_iterations << " prefill");
    CHECK(o.events == 1);
    CHECK(o.preempting_iterations > 100);
    // A launch is two events (its start and its end) beside the 300 arrivals. An iteration
    // that prefills, or preempts, used to be launched alone: the runs go through most of
    // those that preempt, and most that end the prompts re-admitted after a preemption
    // start runs. Launching those alone took 1.5 to 2 launches per iteration that
    // prefills (the run after each one more); here 1.1 to 1.4.
    const long long launches = (o.bulk_events - 300) / 2;
    CHECK(2 * launches < 3 * o.prefill_iterations);
  }
  // A per-step prefill limit: re-admissions take many chunks; the outputs stay the same.
  CHECK(check_both_ways(
            "thrash_threshold",
            thrash + std::vector<std::string>{"40000", "--set",
                                              "scheduler.long_prefill_token_threshold=64"})
            .events == 1);
}

TEST_CASE("bulk decoding gives byte-identical outputs with outputs cut at max_len",
          "[cluster][bulk][max_len]") {
  // ShareGPT under a max_len of 600 tokens: many outputs stop at max_len, some prompts are
  // rejected; a cut request's last iteration is where it reaches max_len either way.
  const std::vector<std::string> cut = {"--max-len", "600"};
  long long fewer_events = 0;
  fewer_events +=
      check_both_ways("cut_vllm", workload("300", "12") + cut +
                                      std::vector<std::string>{"--kv-capacity-tokens", "5000"})
          .events;
  fewer_events +=
      check_both_ways("cut_vllm_v1", workload("300", "12") + cut +
                                         std::vector<std::string>{"--scheduler", "vllm_v1"})
          .events;
  fewer_events += check_both_ways("cut_orca", workload("200", "10") + cut +
                                                  std::vector<std::string>{"--scheduler", "orca"})
                      .events;
  CHECK(fewer_events == 3);
  const auto summary = nlohmann::json::parse(test::run_servesim(std::vector<std::string>{"run"} +
                                                                workload("300", "12") + cut +
                                                                std::vector<std::string>{"--json"})
                                                 .out);
  CHECK(summary["requests_output_cut"].get<int>() > 0);
}

TEST_CASE("bulk decoding gives byte-identical outputs under every router and closed loops",
          "[cluster][bulk]") {
  for (const char* router : {"least_outstanding", "least_kv", "random"}) {
    check_both_ways(
        std::string("router_") + router,
        workload("300", "20") + std::vector<std::string>{"--replicas", "3", "--router", router});
  }
  check_both_ways("closed_loop", std::vector<std::string>{
                                     "--workload", "sharegpt", "--num-requests", "200", "--arrival",
                                     "closed_loop", "--set", "workload.arrival.users=12", "--set",
                                     "workload.arrival.think_time_s=0.5", "--replicas", "2"});
  check_both_ways("pipeline", workload("150", "8") + std::vector<std::string>{"--pp", "2"});
}

TEST_CASE("bulk decoding gives byte-identical summaries with records off", "[cluster][bulk]") {
  // Without iteration records the collector sums a run's iterations in one loop of its own.
  const std::vector<std::string> records_off = {"--set", "output.iteration_records=false", "--set",
                                                "output.request_records=false"};
  const Outcome outcome = check_both_ways(
      "records_off",
      workload("300", "12") +
          std::vector<std::string>{"--kv-capacity-tokens", "5000", "--replicas", "2"} + records_off,
      {"summary.json"});
  CHECK(outcome.events == 1);

  const test::ScratchDir scratch("bulk_records_off_files");
  const auto out = scratch.path() / "out";
  auto args = std::vector<std::string>{"run"} + workload("50", "12") + records_off +
              std::vector<std::string>{"--out", out.string(), "--no-plots"};
  const auto run = test::run_servesim(args);
  REQUIRE(run.exit_code == 0);
  CHECK(std::filesystem::exists(out / "summary.json"));
  CHECK_FALSE(std::filesystem::exists(out / "requests.csv"));
  CHECK_FALSE(std::filesystem::exists(out / "iterations.csv"));
  CHECK_THAT(run.out, Catch::Contains("/{summary.json, resolved_config.json}"));
}

TEST_CASE("bulk decoding gives byte-identical outputs under every engine profile",
          "[cluster][bulk][engine]") {
  // Each engine's own scheduler, prefix caching and planning ahead (vllm: the V1 scheduler,
  // prefix caching on, one step ahead), under tight memory so that requests are preempted.
  long long fewer_events = 0;
  for (const char* engine : {"vllm", "vllm-v0", "vllm-0.6", "sglang", "trtllm"}) {
    fewer_events +=
        check_both_ways(std::string("engine_") + engine,
                        workload("300", "12") + std::vector<std::string>{"--engine", engine,
                                                                         "--kv-capacity-tokens",
                                                                         "6000", "--replicas", "2"})
            .events;
  }
  CHECK(fewer_events == 5);  // bulk decoding did happen under each
}

TEST_CASE(
    "bulk decoding runs past the content while requests wait: shared prompt prefixes, "
    "byte-identical",
    "[cluster][bulk][engine]") {
  // Prompts share system prompts and per-user questions; outputs are the requests' own. The
  // cache is small, so requests wait (and are preempted) for most of the run: decoding past
  // its content a request names only blocks no other request can hit, so runs go on.
  const std::vector<std::string> shared = {
      "--workload",
      "sharegpt",
      "--num-requests",
      "300",
      "--rate",
      "20",
      "--set",
      "workload.lengths={\"distribution\": \"shared_prefix\", \"groups\": 4, "
      "\"users_per_group\": 5, \"system_prompt_tokens\": 100, \"question_tokens\": 300, "
      "\"output_tokens\": 400, \"questions\": \"per_user\"}"};
  const Outcome one = check_both_ways(
      "past_content", shared + std::vector<std::string>{"--kv-capacity-tokens", "12000"});
  // Each replica's cache looked up by the router between iterations.
  const Outcome routed = check_both_ways(
      "past_content_routed",
      shared + std::vector<std::string>{"--kv-capacity-tokens", "24000", "--replicas", "2",
                                        "--router", "prefix_aware"});
  // One iteration at a time while requests wait would leave the events near the plain run's.
  CHECK(one.bulk_events * 2 < one.step_events);
  CHECK(routed.bulk_events * 2 < routed.step_events);
}

TEST_CASE(
    "bulk decoding gives byte-identical outputs on the default engine: prefix hits, the "
    "host tier, speculation, DP and EP",
    "[cluster][bulk][engine]") {
  long long fewer_events = 0;
  // Shared prompt prefixes that hit, with and without a host tier behind the GPU's blocks.
  fewer_events +=
      check_both_ways("prefix_hits", std::vector<std::string>{"--workload", "agentic-coding",
                                                              "--num-requests", "200", "--rate",
                                                              "4", "--kv-capacity-tokens", "60000"})
          .events;
  fewer_events +=
      check_both_ways("host_tier",
                      std::vector<std::string>{"--workload", "agentic-coding", "--num-requests",
                                               "200", "--rate", "4", "--kv-capacity-tokens",
                                               "30000", "--set", "memory.host_cache_gib=1"})
          .events;
  fewer_events += check_both_ways("multi_turn",
                                  std::vector<std::string>{"--workload", "multi-turn-chat",
                                                           "--num-requests", "150", "--seed", "5"})
                      .events;
  // Experts over 2 GPUs, and 2 data-parallel attention ranks.
  fewer_events +=
      check_both_ways("moe_ep", workload("200", "12") +
                                    std::vector<std::string>{"--model", "qwen3-30b-a3b", "--tp",
                                                             "2", "--enable-expert-parallel"})
          .events;
  fewer_events += check_both_ways("moe_dp", workload("200", "12") +
                                                std::vector<std::string>{
                                                    "--model", "qwen3-30b-a3b", "--tp", "1", "--dp",
                                                    "2", "--enable-expert-parallel"})
                      .events;
  CHECK(fewer_events == 5);
  // Speculation turns bulk decoding off: the flag changes nothing, events included.
  const Outcome spec =
      check_both_ways("speculative", workload("200", "12") +
                                         std::vector<std::string>{"--speculative-config",
                                                                  "{\"method\": \"ngram\", "
                                                                  "\"num_speculative_tokens\": 3}",
                                                                  "--acceptance-rate", "0.6"});
  CHECK(spec.events == 0);
}

TEST_CASE(
    "bulk decoding gives byte-identical outputs with disaggregation and with arrivals queued "
    "behind a waiting request",
    "[cluster][bulk][disaggregation]") {
  // Tight decode memory: KV set aside for prompts on their way (before the prefill, or after
  // it) is freed while decode runs are in flight, and prompts are prefilled locally too.
  const std::vector<std::string> pools = {"--disaggregation", "1p2d", "--kv-capacity-tokens",
                                          "20000"};
  long long fewer_events = 0;
  fewer_events += check_both_ways("disaggregated_pull", workload("400", "14") + pools).events;
  fewer_events +=
      check_both_ways(
          "disaggregated_reserve",
          workload("400", "14") + pools +
              std::vector<std::string>{
                  "--set", "disaggregation.kv_transfer.handoff=\"reserve_before_prefill\""})
          .events;
  fewer_events += check_both_ways("disaggregated_local",
                                  workload("400", "14") + pools +
                                      std::vector<std::string>{
                                          "--set", "disaggregation.local_prefill_max_tokens=200"})
                      .events;
  // The default engine over its capacity: the waiting queue grows, and arrivals join it
  // behind a head that the decode runs' plans do not admit.
  fewer_events +=
      check_both_ways("overloaded", workload("600", "60") +
                                        std::vector<std::string>{"--kv-capacity-tokens", "8000"})
          .events;
  CHECK(fewer_events == 4);
  // Prompts with content: the hand-off looks the decode replica's prefix cache up while its
  // decodes name blocks, and prefills wait for decode room that a preemption frees.
  check_both_ways("disaggregated_content",
                  std::vector<std::string>{"--disaggregation", "1p1d", "--workload",
                                           "agentic-coding", "--num-requests", "150", "--rate", "5",
                                           "--kv-capacity-tokens", "30000", "--seed", "8", "--set",
                                           "disaggregation.local_prefill_max_tokens=500"});
  // Prompts waiting for decode room that a preempting step frees.
  check_both_ways(
      "disaggregated_room",
      workload("300", "20") + std::vector<std::string>{"--disaggregation", "2p1d",
                                                       "--kv-capacity-tokens", "15000", "--set",
                                                       "disaggregation.kv_transfer.handoff="
                                                       "\"reserve_before_prefill\""});
  // A router that looks every replica's prefix cache up at each arrival.
  check_both_ways(
      "prefix_aware_router",
      std::vector<std::string>{"--workload", "agentic-coding", "--num-requests", "200", "--rate",
                               "8", "--replicas", "3", "--router", "prefix_aware",
                               "--kv-capacity-tokens", "40000", "--seed", "2"});
}
