// Prefill/decode disaggregation end to end (docs/disaggregation.md): closed forms for one
// request and for transfers sharing a port, a whole run, MLA's transfer bytes, bad input.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "tests/support/test_support.h"

namespace {

using Catch::Contains;
using servesim::test::run_servesim;

// Llama-3-8B in bf16: 2 (K and V) x 32 layers x 8 KV heads x 128 dims x 2 bytes per token.
constexpr double kLlama3KvBytesPerToken = 2.0 * 32 * 8 * 128 * 2;
constexpr double kNicBytesPerS = 50e9;  // H100 SXM: one 400 Gb/s port per GPU
constexpr double kNicLatencyS = 5e-6;   // the profile's inter_node_latency_s

std::vector<std::string> one_pair(std::vector<std::string> extra) {
  std::vector<std::string> args{"run",
                                "--prompt-tokens",
                                "2000",
                                "--output-tokens",
                                "4",
                                "--disaggregation",
                                "1p1d",
                                "--set",
                                "disaggregation.kv_transfer.link=\"nic\""};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

double part(const nlohmann::json& summary, const char* name, const char* stat = "mean") {
  return summary["ttft_breakdown_s"][name][stat].get<double>();
}

double sum_of_parts(const nlohmann::json& summary) {
  double sum = 0;
  for (const char* name :
       {"prefill_queue", "prefill", "transfer_queue", "transfer", "decode_queue", "first_decode"})
    sum += part(summary, name);
  return sum;
}

// The iterations.csv rows of `replica`: their duration_s, in order.
std::vector<double> durations(const std::filesystem::path& csv, int replica) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<double> result;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string id, start, duration;
    std::getline(fields, id, ',');
    std::getline(fields, start, ',');
    std::getline(fields, duration, ',');
    if (std::stoi(id) == replica) result.push_back(std::stod(duration));
  }
  return result;
}

TEST_CASE("one request alone: TTFT is its prefill, its transfer and its first decode step",
          "[app][disaggregation]") {
  servesim::test::ScratchDir dir("disaggregation_alone");
  const auto out = dir.path() / "out";
  const auto result = run_servesim(one_pair({"--num-requests", "1", "--out", out.string()}));
  REQUIRE(result.exit_code == 0);
  std::ifstream file(out / "summary.json");
  const auto summary = nlohmann::json::parse(file);
  // The transfer: the prompt's KV over one GPU's port, plus the latency.
  const double transfer_s = 2000 * kLlama3KvBytesPerToken / kNicBytesPerS + kNicLatencyS;
  CHECK(part(summary, "transfer") == Approx(transfer_s).margin(2e-9));
  CHECK(summary["kv_transfer"]["bytes"].get<double>() == 2000 * kLlama3KvBytesPerToken);
  CHECK(summary["kv_transfer"]["transfers"] == 1);
  CHECK(part(summary, "transfer_queue") == 0);
  // One transfer in flight for its duration, over the run; the port busy as long.
  const double duration_s = summary["duration_s"].get<double>();
  CHECK(summary["kv_transfer"]["mean_in_flight"].get<double>() ==
        Approx(transfer_s / duration_s).epsilon(1e-6));
  CHECK(summary["kv_transfer"]["link_utilization"].get<double>() ==
        Approx(2000 * kLlama3KvBytesPerToken / kNicBytesPerS / duration_s).epsilon(1e-6));
  // One sequence in every iteration of both pools.
  CHECK(summary["pools"]["prefill"]["mean_batch_size"] == 1.0);
  CHECK(summary["pools"]["decode"]["mean_batch_size"] == 1.0);
  // The prefill is the prefill replica's one iteration; the first decode the decode replica's
  // first, which computes the last prompt token again (1 token, 2,000 of context).
  const auto prefill_steps = durations(out / "iterations.csv", 0);
  const auto decode_steps = durations(out / "iterations.csv", 1);
  REQUIRE(prefill_steps.size() == 1);
  REQUIRE(decode_steps.size() == 4);  // the first token, then three more
  CHECK(part(summary, "prefill") == Approx(prefill_steps[0]).margin(1e-9));
  CHECK(part(summary, "first_decode") == Approx(decode_steps[0]).margin(1e-9));
  CHECK(decode_steps[0] < prefill_steps[0] / 4);
  CHECK(part(summary, "decode_queue") == Approx(0).margin(1e-9));  // an idle decode replica
  CHECK(sum_of_parts(summary) == Approx(summary["ttft_s"]["mean"].get<double>()).margin(1e-9));
  // requests.csv has the parts, last, adding up to the request's TTFT.
  std::ifstream csv(out / "requests.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  CHECK_THAT(header, Catch::EndsWith(",ttft_prefill_queue_s,ttft_prefill_s,ttft_transfer_queue_s,"
                                     "ttft_transfer_s,ttft_decode_queue_s,ttft_first_decode_s"));
  std::vector<std::string> cells;
  std::stringstream fields(row);
  for (std::string cell; std::getline(fields, cell, ',');)
    cells.push_back(cell);
  REQUIRE(cells.size() >= 7);
  double parts_s = 0;
  for (std::size_t i = cells.size() - 6; i < cells.size(); ++i)
    parts_s += std::stod(cells[i]);
  CHECK(parts_s == Approx(summary["ttft_s"]["mean"].get<double>()).margin(1e-8));
  CHECK(std::stod(cells[cells.size() - 3]) == Approx(transfer_s).margin(1e-9));
  // The stacked plot's data: one group (one request) of 2,000 prompt tokens, its parts in ms.
  std::ifstream dat(out / "ttft_breakdown.dat");
  std::string comment;
  std::getline(dat, comment);
  double tokens = 0, ms = 0, plotted_ms = 0;
  dat >> tokens;
  while (dat >> ms)
    plotted_ms += ms;
  CHECK(tokens == 2000);
  CHECK(plotted_ms == Approx(1e3 * summary["ttft_s"]["mean"].get<double>()).margin(1e-5));
}

TEST_CASE("layer-wise streaming hides all but the last layer when the prefill is the longer",
          "[app][disaggregation]") {
  const auto run = [](std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--num-requests", "1", "--json", "--set",
                               "disaggregation.kv_transfer.layerwise=true"});
    const auto result = run_servesim(one_pair(extra));
    REQUIRE(result.exit_code == 0);
    return result.json();
  };
  constexpr double kLayers = 32;
  const double bytes = 2000 * kLlama3KvBytesPerToken;
  // At 50 GB/s a layer's KV (8.2 MB) takes 0.16 ms, less than a layer's share of the prefill.
  const auto fast = run({});
  const double layer_s = bytes / kLayers / kNicBytesPerS;
  CHECK(part(fast, "prefill") / kLayers > layer_s);
  CHECK(part(fast, "transfer") == Approx(layer_s + kNicLatencyS).margin(2e-9));
  // At 1 GB/s the link is the bound: L (b - c) + c after the prefill, c its compute per layer.
  const auto slow = run({"--set", "disaggregation.kv_transfer.bandwidth_bytes_per_s=1e9"});
  const double b = bytes / kLayers / 1e9;
  const double c = part(slow, "prefill") / kLayers;
  REQUIRE(b > c);
  CHECK(part(slow, "transfer") == Approx(kLayers * (b - c) + c + kNicLatencyS).margin(2e-9));
  CHECK(part(slow, "transfer") < bytes / 1e9);
}

TEST_CASE("two transfers that leave one prefill replica together each take twice as long",
          "[app][disaggregation]") {
  // Both prompts are prefilled in one batch, so both transfers start at its end.
  const auto summary = run_servesim(one_pair({"--num-requests", "2", "--rate", "inf", "--json"}));
  REQUIRE(summary.exit_code == 0);
  const auto json = summary.json();
  const double alone_s = 2000 * kLlama3KvBytesPerToken / kNicBytesPerS;
  CHECK(part(json, "transfer") == Approx(2 * alone_s + kNicLatencyS).margin(2e-9));
  CHECK(part(json, "transfer", "p99") == Approx(2 * alone_s + kNicLatencyS).margin(2e-9));
}

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

TEST_CASE("blocks the decode replica's prefix cache holds do not cross the link",
          "[app][disaggregation]") {
  // Fifty requests of one 1,200-token prompt: the decode replica caches it after the first.
  const std::string workload =
      R"(workload={"arrival": {"process": "poisson", "rate_per_s": 2}, "num_requests": 50,
         "lengths": {"distribution": "shared_prefix", "groups": 1, "users_per_group": 1,
         "system_prompt_tokens": 1000, "question_tokens": 200, "output_tokens": 16,
         "questions": "per_user"}})";
  const auto bytes = [&](const char* caching) {
    const auto result =
        run_servesim({"run", "--set", workload, "--disaggregation", "1p1d", caching, "--json"});
    REQUIRE(result.exit_code == 0);
    return result.json()["kv_transfer"]["bytes"].get<double>();
  };
  CHECK(bytes("--no-enable-prefix-caching") == 50 * 1200 * kLlama3KvBytesPerToken);
  CHECK(bytes("--enable-prefix-caching") == 1200 * kLlama3KvBytesPerToken);
}

TEST_CASE("an MLA model hands off its latent: (kv_lora_rank + rope dims) x layers per token",
          "[app][disaggregation]") {
  // DeepSeek-V3: 512 + 64 values per layer, 61 layers, bf16; decode expert-parallel.
  const auto bytes = [](std::vector<std::string> decode) {
    std::vector<std::string> args{"run",         "--model",
                                  "deepseek-v3", "--hw",
                                  "h200",        "--tp",
                                  "8",           "--prompt-tokens",
                                  "1000",        "--output-tokens",
                                  "2",           "--num-requests",
                                  "1",           "--disaggregation",
                                  "1p1d",        "--kv-dtype",
                                  "bf16",        "--json",
                                  "--set",       "disaggregation.decode.expert_parallel=true"};
    for (const auto& set : decode) {
      args.push_back("--set");
      args.push_back("disaggregation.decode." + set);
    }
    const auto result = run_servesim(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result.json()["kv_transfer"]["bytes"].get<double>();
  };
  constexpr double kLatent = 1000.0 * (512 + 64) * 61 * 2;
  // Data-parallel attention (DP 8, TP 1): the request's one rank, one GPU, receives it once.
  CHECK(bytes({"tp=1", "data_parallel=8"}) == kLatent);
  // TP 8: every rank holds the latent whole, and each receives it over its own port.
  CHECK(bytes({}) == 8 * kLatent);
}

TEST_CASE("a finer prefill TP sends each block in more pieces, each with its overhead",
          "[app][disaggregation]") {
  // Llama-3-8B's 8 KV heads: prefill TP 4 cuts them in 4, decode TP 1 holds them whole, so
  // each of the prompt's 125 blocks of 16 tokens comes from 4 prefill GPUs.
  const auto transfer_s = [](const char* prefill_tp, const char* overhead_s) {
    const auto result = run_servesim(
        one_pair({"--num-requests", "1", "--prefill-tp", prefill_tp, "--json", "--set",
                  std::string("disaggregation.kv_transfer.block_overhead_s=") + overhead_s}));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto json = result.json();
    // The bytes are the model's once either way: no head is replicated.
    CHECK(json["kv_transfer"]["bytes"].get<double>() == 2000 * kLlama3KvBytesPerToken);
    return part(json, "transfer");
  };
  CHECK(transfer_s("4", "1e-4") - transfer_s("4", "0") == Approx(125 * 4 * 1e-4).margin(2e-9));
  CHECK(transfer_s("1", "1e-4") - transfer_s("1", "0") == Approx(125 * 1e-4).margin(2e-9));
  // Four prefill GPUs send to one decode GPU: its one port is the bound.
  CHECK(transfer_s("4", "0") ==
        Approx(2000 * kLlama3KvBytesPerToken / kNicBytesPerS + kNicLatencyS).margin(2e-9));
}

TEST_CASE("replicas in one node hand off over NVLink, the others over their NICs",
          "[app][disaggregation]") {
  const auto kv = [](const char* layout) {
    const auto result = run_servesim({"run", "--num-requests", "60", "--rate", "10", "--tp", "2",
                                      "--disaggregation", layout, "--json"});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result.json()["kv_transfer"];
  };
  // 1p1d at TP 2: one node. 4p4d at TP 2: prefill fills node 0, decode node 1.
  CHECK(kv("1p1d")["nvlink_transfers"] == 60);
  CHECK(kv("4p4d")["nvlink_transfers"] == 0);
  // 2p3d: two decode replicas share node 0 with the prefill ones, the third is in node 1.
  const auto mixed = kv("2p3d");
  CHECK(mixed["nvlink_transfers"].get<int>() > 0);
  CHECK(mixed["nvlink_transfers"].get<int>() < 60);
  CHECK(mixed["transfers"] == 60);
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
