// Prefill/decode disaggregation end to end (docs/disaggregation.md): how a disaggregated
// deployment schedules. A whole run, a self-preempting prefill replica, selective
// disaggregation, decode room that is taken, KV that expires, each engine's hand-off, bad input.
// The hand-off's closed forms are in disaggregation_transfer_test.cpp.
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "tests/support/disaggregation_runs.h"
#include "tests/support/test_support.h"

namespace {

using servesim::test::kNicBytesPerS;
using servesim::test::kNicLatencyS;
using servesim::test::run_servesim;
using servesim::test::sum_of_parts;

TEST_CASE("a disaggregated run serves every request, its TTFT parts adding up",
          "[app][disaggregation]") {
  const auto result = run_servesim(
      {"run", "--num-requests", "400", "--rate", "12", "--disaggregation", "2p1d", "--json"});
  REQUIRE(result.exit_code == 0);
  const auto summary = result.json();
  CHECK(summary["requests_completed"] == 400);
  CHECK(summary["kv_transfer"]["transfers"] == 400);
  CHECK(sum_of_parts(summary) == Approx(summary["ttft_s"]["mean"].get<double>()).epsilon(1e-9));
  // Within one node (3 GPUs of an 8-GPU H100 node) the KV crosses NVLink: 450 GB/s.
  const double mean_bytes = summary["kv_transfer"]["bytes"].get<double>() / 400;
  CHECK(summary["kv_transfer"]["mean_transfer_s"].get<double>() >=
        mean_bytes / 450e9 + kNicLatencyS - 1e-9);
  CHECK(summary["kv_transfer"]["mean_transfer_s"].get<double>() < mean_bytes / kNicBytesPerS);
  // Each pool's figures: 2 prefill GPUs, 1 decode GPU, throughput per GPU of each.
  const auto& pools = summary["pools"];
  CHECK(pools["prefill"]["replicas"] == 2);
  CHECK(pools["decode"]["gpus"] == 1);
  const double output_per_s = summary["throughput_output_tokens_per_s"].get<double>();
  CHECK(pools["decode"]["output_tokens_per_s_per_gpu"].get<double>() == Approx(output_per_s));
  CHECK(pools["output_tokens_per_s_per_gpu"].get<double>() == Approx(output_per_s / 3));
  // Each pool's KV memory shares add up to 1, and weighted by the pools' iteration time they
  // make the run's.
  double token_states_time_s = 0, iteration_time_s = 0;
  for (const char* role : {"prefill", "decode"}) {
    CHECK(pools[role]["busy_share"].get<double>() > 0);
    CHECK(pools[role]["busy_share"].get<double>() <= 1);
    double shares = 0;
    for (const auto& [key, share] : pools[role]["kv_memory"].items())
      shares += share.get<double>();
    CHECK(shares == Approx(1).epsilon(1e-9));
    const double time_s = pools[role]["busy_share"].get<double>() *
                          pools[role]["replicas"].get<double>() *
                          summary["duration_s"].get<double>();
    iteration_time_s += time_s;
    token_states_time_s += pools[role]["kv_memory"]["token_states"].get<double>() * time_s;
  }
  CHECK(summary["kv_memory"]["token_states"].get<double>() ==
        Approx(token_states_time_s / iteration_time_s).epsilon(1e-9));
  // Decode holds the sequences while they generate; prefill only while it computes prompts.
  CHECK(pools["decode"]["kv_memory"]["token_states"].get<double>() >
        pools["prefill"]["kv_memory"]["token_states"].get<double>());
  // Decode batches the requests prefill hands it one or two at a time.
  CHECK(pools["decode"]["mean_batch_size"].get<double>() >
        2 * pools["prefill"]["mean_batch_size"].get<double>());
  CHECK(summary["kv_transfer"]["link_utilization"].get<double>() > 0);
  CHECK(summary["kv_transfer"]["link_utilization"].get<double>() < 1);
  // Prefill is the lighter load at ShareGPT's lengths: its replicas idle most of the time.
  CHECK(pools["prefill"]["busy_share"].get<double>() < pools["decode"]["busy_share"].get<double>());
  // Without the flags the same run is aggregated and says nothing of transfers.
  const auto aggregated =
      run_servesim({"run", "--num-requests", "400", "--rate", "12", "--replicas", "3", "--json"})
          .json();
  CHECK_FALSE(aggregated.contains("ttft_breakdown_s"));
  CHECK_FALSE(aggregated.contains("kv_transfer"));
  CHECK_FALSE(aggregated.contains("pools"));
}

TEST_CASE("a prefill replica whose one running request preempts itself plans again at once",
          "[app][disaggregation]") {
  // Tight KV on the prefill side, most of it held by finished prefills whose KV has not left:
  // a prompt's chunk finds no block, its request (the only one running) goes back to waiting
  // and the step schedules nothing. vLLM's engine then plans its next step; servesim used to
  // stop with an invariant error here.
  const auto result = run_servesim({"run", "--disaggregation", "1p2d", "--workload",
                                    "agentic-coding", "--num-requests", "150", "--rate", "5",
                                    "--kv-capacity-tokens", "30000", "--seed", "13", "--json"});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto summary = result.json();
  // Every request finished but the few whose context can never fit those 30,000 tokens.
  CHECK(summary["requests_completed"].get<int>() + summary["requests_rejected"].get<int>() == 150);
  CHECK(summary["requests_completed"].get<int>() > 140);
  CHECK(summary["preemptions"].get<int>() > 0);
}

TEST_CASE("selective disaggregation prefills short prompts on their decode replica",
          "[app][disaggregation]") {
  const auto run = [](const char* threshold) {
    const auto result = run_servesim(
        {"run", "--num-requests", "300", "--rate", "10", "--disaggregation", "1p1d", "--set",
         std::string("disaggregation.local_prefill_max_tokens=") + threshold, "--json"});
    REQUIRE(result.exit_code == 0);
    return result.json();
  };
  const auto some = run("100");
  const auto local = some["kv_transfer"]["local_prefills"].get<std::int64_t>();
  CHECK(local > 0);
  CHECK(local + some["kv_transfer"]["transfers"].get<std::int64_t>() == 300);
  CHECK(some["requests_completed"] == 300);
  // Every prompt short enough: nothing crosses the link, and the prefill pool idles.
  const auto all = run("1000000");
  CHECK(all["kv_transfer"]["transfers"] == 0);
  CHECK(all["kv_transfer"]["local_prefills"] == 300);
  CHECK(all["pools"]["prefill"]["busy_share"] == 0);
}

TEST_CASE("selective disaggregation counts the prompt tokens the decode replica does not cache",
          "[app][disaggregation]") {
  // Multi-turn chats: a later turn's history is cached where its conversation was decoded,
  // so with prefix caching long prompts with few new tokens are prefilled there (llm-d).
  servesim::test::ScratchDir dir("disaggregation_cached_share");
  const auto run = [&](const char* caching) {
    const auto out = dir.path() / caching;
    const auto result = run_servesim({"run", "--workload", "multi-turn-chat", "--num-requests",
                                      "600", "--disaggregation", "1p1d", "--set",
                                      "disaggregation.local_prefill_max_tokens=256",
                                      std::string("--") + caching, "--out", out.string()});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return out;
  };
  const auto locals = [](const std::filesystem::path& out) {
    const auto parts = servesim::test::csv_column(out / "requests.csv", "ttft_prefill_s");
    const auto prompts = servesim::test::csv_column(out / "requests.csv", "prompt_tokens");
    const auto cached = servesim::test::csv_column(out / "requests.csv", "cached_tokens");
    std::int64_t count = 0, longest = 0, most_new = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].empty()) continue;  // handed off
      ++count;
      longest = std::max<std::int64_t>(longest, std::stoll(prompts[i]));
      most_new = std::max<std::int64_t>(most_new, std::stoll(prompts[i]) - std::stoll(cached[i]));
    }
    return std::array<std::int64_t, 3>{count, longest, most_new};
  };
  const auto plain = locals(run("no-enable-prefix-caching"));
  const auto cached = locals(run("enable-prefix-caching"));
  CHECK(plain[1] <= 256);  // without a cache only short prompts
  CHECK(cached[0] > plain[0]);
  CHECK(cached[1] > 256);  // long prompts whose history the decode replica holds
  CHECK(cached[2] <= 256);
}

// Two 2,000-token prompts arriving together, on a decode replica whose KV (2,112 tokens) holds
// one of them: the second's KV waits for the first to finish, before its transfer (vLLM's
// order) or before its prefill (SGLang's).
struct TwoPrompts {
  std::vector<double> completion_s, prefill_queue_s, prefill_s, transfer_queue_s, ttft_s, parts_s;
  std::vector<double> decode_queue_s;
  nlohmann::json summary;
};
TwoPrompts two_prompts_on_one_seat(const std::string& handoff) {
  servesim::test::ScratchDir dir("disaggregation_" + handoff);
  const auto trace = dir.write("two.csv",
                               "arrival_time_s,prompt_tokens,output_tokens\n"
                               "0.0,2000,50\n0.0,2000,50\n");
  const auto out = dir.path() / "out";
  const auto result = run_servesim(
      {"run", "--workload", trace.string(), "--disaggregation", "1p1d", "--max-len", "2100",
       "--set", "disaggregation.decode.memory.kv_capacity_tokens=2112", "--set",
       "disaggregation.kv_transfer.handoff=\"" + handoff + "\"", "--out", out.string()});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto column = [&](const std::string& name) {
    std::vector<double> values;
    for (const auto& cell : servesim::test::csv_column(out / "requests.csv", name))
      values.push_back(std::stod(cell));
    return values;
  };
  TwoPrompts r{column("completion_s"),
               column("ttft_prefill_queue_s"),
               column("ttft_prefill_s"),
               column("ttft_transfer_queue_s"),
               column("ttft_s"),
               {},
               column("ttft_decode_queue_s"),
               nlohmann::json::parse(servesim::test::read_file(out / "summary.json"))};
  for (std::size_t i = 0; i < 2; ++i) {
    double sum = 0;
    for (const char* part : {"ttft_prefill_queue_s", "ttft_prefill_s", "ttft_transfer_queue_s",
                             "ttft_transfer_s", "ttft_decode_queue_s", "ttft_first_decode_s"})
      sum += column(part)[i];
    r.parts_s.push_back(sum);
  }
  return r;
}

TEST_CASE("a prompt whose decode room is taken waits: for its transfer, or for its prefill",
          "[app][disaggregation]") {
  // vLLM: both prompts prefill together; the second's blocks are allocated on the decode side,
  // and its KV pulled, only once the first has finished and freed its blocks.
  const TwoPrompts pull = two_prompts_on_one_seat("pull_after_prefill");
  CHECK(pull.prefill_queue_s[1] == pull.prefill_queue_s[0]);  // prefilled in the same step
  CHECK(pull.prefill_s[1] == pull.prefill_s[0]);
  CHECK(pull.transfer_queue_s[0] == 0);
  // Both arrived at 0: the second's transfer starts when the first completes.
  CHECK(pull.transfer_queue_s[1] > 0);
  CHECK(pull.prefill_queue_s[1] + pull.prefill_s[1] + pull.transfer_queue_s[1] ==
        Approx(pull.completion_s[0]).margin(1e-9));
  // SGLang: the decode side reserves before the prefill, so the second is not even prefilled
  // until the first has finished; its KV then leaves at once.
  const TwoPrompts reserve = two_prompts_on_one_seat("reserve_before_prefill");
  CHECK(reserve.transfer_queue_s[0] == 0);
  CHECK(reserve.transfer_queue_s[1] == 0);
  CHECK(reserve.prefill_queue_s[1] == Approx(reserve.completion_s[0]).margin(1e-9));
  for (const TwoPrompts* run : {&pull, &reserve}) {
    for (std::size_t i = 0; i < 2; ++i)
      CHECK(run->parts_s[i] == Approx(run->ttft_s[i]).margin(1e-8));
    // The pools' queues, averaged over the run: the requests' waits over its duration.
    const double duration_s = run->summary["duration_s"].get<double>();
    const auto& pools = run->summary["pools"];
    CHECK(pools["prefill"]["mean_queued_requests"].get<double>() ==
          Approx((run->prefill_queue_s[0] + run->prefill_queue_s[1]) / duration_s).epsilon(1e-6));
    CHECK(pools["decode"]["mean_queued_requests"].get<double>() ==
          Approx((run->transfer_queue_s[0] + run->transfer_queue_s[1] + run->decode_queue_s[0] +
                  run->decode_queue_s[1]) /
                 duration_s)
              .epsilon(1e-6));
  }
}

TEST_CASE("KV the decode side does not read in time is freed, and the decode side computes it",
          "[app][disaggregation]") {
  // The two prompts on one decode seat, vLLM's order: the second's KV waits on its prefill
  // replica for the first to finish, about 0.4 s, past an abort timeout of 50 ms.
  servesim::test::ScratchDir dir("disaggregation_abort");
  const auto trace = dir.write("two.csv",
                               "arrival_time_s,prompt_tokens,output_tokens\n"
                               "0.0,2000,50\n0.0,2000,50\n");
  const auto run = [&](const char* timeout_s) {
    const auto out = dir.path() / timeout_s;
    const auto result = run_servesim(
        {"run", "--workload", trace.string(), "--disaggregation", "1p1d", "--max-len", "2100",
         "--set", "disaggregation.decode.memory.kv_capacity_tokens=2112", "--set",
         std::string("disaggregation.kv_transfer.abort_timeout_s=") + timeout_s, "--out",
         out.string()});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return out;
  };
  const auto kept = run("0");  // kept until read
  const auto expired = run("0.05");
  const auto summary = nlohmann::json::parse(servesim::test::read_file(expired / "summary.json"));
  CHECK(summary["requests_completed"] == 2);
  CHECK(summary["kv_transfer"]["expired_handoffs"] == 1);
  CHECK(summary["kv_transfer"]["transfers"] == 1);
  const auto cells = [](const std::filesystem::path& out, const char* column) {
    return servesim::test::csv_column(out / "requests.csv", column);
  };
  // Rows in id order: the second request has no TTFT parts, and it waited for the first.
  REQUIRE(cells(expired, "id") == std::vector<std::string>{"0", "1"});
  CHECK(cells(expired, "ttft_transfer_s")[1].empty());
  CHECK_FALSE(cells(expired, "ttft_transfer_s")[0].empty());
  const double first_done_s = std::stod(cells(expired, "completion_s")[0]);
  const double ttft_expired_s = std::stod(cells(expired, "ttft_s")[1]);
  CHECK(ttft_expired_s > first_done_s);
  // Computing 2,000 prompt tokens on the decode side takes longer than their transfer.
  REQUIRE(cells(kept, "id") == std::vector<std::string>{"0", "1"});
  CHECK(ttft_expired_s > std::stod(cells(kept, "ttft_s")[1]));
  CHECK(std::stod(cells(kept, "completion_s")[0]) == first_done_s);
  const auto kept_summary = nlohmann::json::parse(servesim::test::read_file(kept / "summary.json"));
  CHECK(kept_summary["kv_transfer"]["expired_handoffs"] == 0);
  CHECK(kept_summary["kv_transfer"]["transfers"] == 2);
}

TEST_CASE("each engine names its hand-off, which the configuration may override",
          "[app][disaggregation]") {
  const auto handoff = [](std::vector<std::string> sets) {
    servesim::ConfigSources sources;
    sources.overrides.push_back({"test", "disaggregation.prefill.replicas=1"});
    sources.overrides.push_back({"test", "disaggregation.decode.replicas=1"});
    for (const auto& set : sets)
      sources.overrides.push_back({"test", set});
    return servesim::assemble_config(
               sources, servesim::test::source_dir())["disaggregation"]["kv_transfer"]["handoff"]
        .get<std::string>();
  };
  CHECK(handoff({}) == "pull_after_prefill");  // vLLM, the default engine
  CHECK(handoff({"engine.name=\"trtllm\""}) == "pull_after_prefill");
  CHECK(handoff({"engine.name=\"sglang\""}) == "reserve_before_prefill");
  CHECK(handoff({"engine.name=\"sglang\"",
                 "disaggregation.kv_transfer.handoff=\"pull_after_prefill\""}) ==
        "pull_after_prefill");
}

TEST_CASE("bad disaggregation input: one line, exit 3 or 4", "[app][disaggregation]") {
  using servesim::test::require_error;
  require_error(run_servesim({"run", "--prefill-replicas", "0", "--decode-replicas", "1"}), 3,
                "disaggregation.prefill.replicas");
  require_error(run_servesim({"run", "--prefill-replicas", "1"}), 3,
                "disaggregation.decode\": required");
  require_error(run_servesim({"run", "--disaggregation", "1p1d", "--set",
                              "disaggregation.decode.workload=\"sharegpt\""}),
                3, "workload");
  require_error(run_servesim({"run", "--disaggregation", "1p1d", "--set",
                              "disaggregation.kv_transfer.bandwidth_bytes_per_s=0"}),
                3, "bandwidth_bytes_per_s");
  require_error(run_servesim({"run", "--disaggregation", "2x1"}), 2, "expected NpMd");
  require_error(run_servesim({"run", "--disaggregation", "1p1d", "--set",
                              "disaggregation.kv_transfer.handoff=\"push\""}),
                3, "handoff");
  require_error(run_servesim({"run", "--disaggregation", "1p1d", "--enable-prefix-caching", "--set",
                              "disaggregation.decode.allocator.block_size=32"}),
                3, "prefix caches must agree");
  // Llama-3.1-70B's 131,072-token sequence does not fit the KV of two H100s: vLLM would not
  // start the decode pool.
  require_error(run_servesim({"run", "--model", "llama-3.1-70b", "--tp", "4", "--disaggregation",
                              "1p1d", "--decode-tp", "2"}),
                4, "disaggregation.decode: vllm does not start");
}
}  // namespace
