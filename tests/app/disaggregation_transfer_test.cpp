// Prefill/decode disaggregation end to end (docs/disaggregation.md): the hand-off's closed
// forms. One request alone, layer-wise streaming, transfers sharing a port, blocks the decode
// side caches, MLA's latent, pieces from a finer prefill TP, NVLink within a node.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "tests/support/disaggregation_runs.h"
#include "tests/support/test_support.h"

namespace {

using servesim::test::kLlama3KvBytesPerToken;
using servesim::test::kNicBytesPerS;
using servesim::test::kNicLatencyS;
using servesim::test::one_pair;
using servesim::test::part;
using servesim::test::run_servesim;
using servesim::test::sum_of_parts;

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
}  // namespace
