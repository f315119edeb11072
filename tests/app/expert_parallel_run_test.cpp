#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

double first_cell(const std::filesystem::path& path, const std::string& column) {
  return std::stod(test::first_csv_cell(path, column));
}

// h100-sxm as a profile file with `gpus_per_node` changed, or the topology keys removed.
std::filesystem::path profile_with_node(const test::ScratchDir& dir, const std::string& name,
                                        std::optional<int> gpus_per_node) {
  auto j =
      nlohmann::json::parse(test::read_file(test::source_dir() / "hw_profiles" / "h100-sxm.json"));
  if (gpus_per_node) {
    j["gpus_per_node"] = *gpus_per_node;
  } else {
    for (const char* key :
         {"gpus_per_node", "inter_node_bandwidth_bytes_per_s", "inter_node_latency_s"}) {
      j.erase(key);
      j["sources"].erase(key);
    }
  }
  const auto path = dir.path() / (name + ".json");
  std::ofstream(path) << j.dump(2);
  return path;
}

// The vLLM engine's costs as a run assembles them (capture sizes cut at 2 x max_num_seqs).
RooflineOptions vllm_options(std::int64_t tp, bool expert) {
  RooflineOptions o;
  o.parallelism = Parallelism{tp, 1, expert};
  o.engine = test::shipped_engine("vllm").costs;
  auto& sizes = o.engine.cuda_graph_capture_sizes;
  sizes.erase(std::upper_bound(sizes.begin(), sizes.end(), 2 * 1024), sizes.end());
  return o;
}

}  // namespace

TEST_CASE("Mixtral with EP across two nodes costs more than in one by the all-to-all closed form",
          "[app][hardware]") {
  test::ScratchDir dir("ep_two_nodes");
  const auto one_node = profile_with_node(dir, "one_node", 8);  // TP 8 = EP 8 in one node
  const auto two_nodes = profile_with_node(dir, "two_nodes", 4);
  const auto ttft_on = [&](const std::filesystem::path& hw, const std::string& name) {
    const auto out = dir.path() / name;
    const auto r =
        test::run_servesim({"run", "--model", "mixtral-8x7b", "--hw", hw.string(), "--tp", "8",
                            "--enable-expert-parallel", "--prompt-tokens", "512", "--output-tokens",
                            "1", "--num-requests", "1", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto resolved = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
    CHECK(resolved["expert_parallel"] == true);
    CHECK(resolved["expert_load_imbalance"] == 1.0);
    return first_cell(out / "requests.csv", "ttft_s");
  };
  const double within_s = ttft_on(one_node, "within");
  const double across_s = ttft_on(two_nodes, "across");
  CHECK(across_s > within_s);

  // The closed form, per MoE layer: each of the 8 GPUs dispatches its 512 / 8 tokens' 2 expert
  // copies of 4,096 bf16 values; of the 8 EP ranks, within one node 7 are over NVLink; across
  // two nodes 3 are over NVLink and 4 over the NIC. Two all-to-alls (dispatch and combine).
  const HardwareProfile h100 = test::shipped_hardware("h100-sxm");
  const double copies = 512.0 / 8 * 2 * 4096 * 2;
  const double link = h100.gpu_link_bandwidth_bytes_per_s * h100.efficiency.gpu_link;
  const double nic = h100.inter_node_bandwidth_bytes_per_s * h100.efficiency.gpu_link;
  const double alpha = h100.overheads.collective_latency_s;
  const double within_layer_s = 2 * (alpha + copies * 7 / 8 / link);
  const double across_layer_s = 2 * (std::max(alpha, h100.inter_node_latency_s) +
                                     std::max(copies * 3 / 8 / link, copies * 4 / 8 / nic));
  CHECK(across_layer_s - within_layer_s ==
        Approx(2 * (copies * 4 / 8 / nic - copies * 7 / 8 / link)));  // the NIC is the slower

  // The model's ep_all_to_all operator is that, times Mixtral's 32 MoE layers.
  HardwareProfile one = h100, two = h100;
  one.gpus_per_node = 8;
  two.gpus_per_node = 4;
  const ModelSpec mixtral = test::shipped_model("mixtral-8x7b");
  const RooflineModel model_one(mixtral, one, vllm_options(8, true));
  const RooflineModel model_two(mixtral, two, vllm_options(8, true));
  BatchShape prefill;
  prefill.add_prefill(512, 0);
  const IterationCost cost_one = model_one.estimate(prefill);
  const IterationCost cost_two = model_two.estimate(prefill);
  const OperatorCost& a2a_one = cost_one.at(OperatorKind::ExpertAllToAll);
  const OperatorCost& a2a_two = cost_two.at(OperatorKind::ExpertAllToAll);
  CHECK(a2a_one.bound == Bound::Network);
  CHECK(a2a_one.bytes == Approx(32 * 2 * copies * 7 / 8));
  CHECK(a2a_two.bytes == Approx(32 * 2 * copies * 7 / 8));
  CHECK(a2a_one.time_s == Approx(32 * within_layer_s));
  CHECK(a2a_two.time_s == Approx(32 * across_layer_s));

  // The TP group (8 > 4 GPUs a node) also crosses the NIC, in two levels: of each call's
  // 2 x 7/8 of M bytes a GPU moves (M = 512 tokens x 4096 x 2 B), 2 x 3/4 M stay on NVLink
  // (reduce-scatter and all-gather within the node) and 2 x 1/2 x M/4 cross the NIC (the
  // all-reduce between the 2 nodes of each GPU's quarter), with NCCL's latency (the larger of
  // the profile's and the NIC's) instead of the custom all-reduce's, for each of 2 x 32 calls.
  const OperatorCost& ar_one = cost_one.at(OperatorKind::TpAllReduce);
  const OperatorCost& ar_two = cost_two.at(OperatorKind::TpAllReduce);
  const double m_bytes = 512.0 * 4096 * 2;
  const double ar_bytes = 2 * 32 * 2.0 * 7 / 8 * m_bytes;
  CHECK(ar_one.bytes == Approx(ar_bytes));
  CHECK(ar_two.bytes == Approx(ar_bytes));
  const double ar_alpha = *vllm_options(8, true).engine.kernels.all_reduce_latency_s;
  CHECK(ar_one.time_s == Approx(64 * ar_alpha + ar_bytes / link));
  CHECK(ar_two.time_s == Approx(64 * (std::max(alpha, h100.inter_node_latency_s) +
                                      2 * 3.0 / 4 * m_bytes / link + m_bytes / 4 / nic)));
  // A flat ring over the NIC would send all 7/4 M of each call over it: 7 times more.
  CHECK(ar_two.time_s < 64 * std::max(alpha, h100.inter_node_latency_s) + ar_bytes / nic);

  // The run's first token (one prefill step; the GPU's time exceeds the host's) costs more
  // across nodes by exactly those two differences, within the nanosecond rounding.
  const double per_moe_layer_s = (across_s - within_s - (ar_two.time_s - ar_one.time_s)) /
                                 static_cast<double>(mixtral.num_layers);
  CHECK(per_moe_layer_s == Approx(across_layer_s - within_layer_s).margin(2e-9 / 32));
}

TEST_CASE("expert parallelism computes whole experts and changes nothing without it",
          "[hardware]") {
  const ModelSpec mixtral = test::shipped_model("mixtral-8x7b");
  const HardwareProfile h100 = test::shipped_hardware("h100-sxm");
  BatchShape decode;
  for (int i = 0; i < 64; ++i)
    decode.add_decode(1024);
  const IterationCost tp = RooflineModel(mixtral, h100, vllm_options(8, false)).estimate(decode);
  const IterationCost ep = RooflineModel(mixtral, h100, vllm_options(8, true)).estimate(decode);
  // The same expert FLOPs in all (each GPU: 1 / 8 of every copy, or every copy of 1 / 8).
  CHECK(ep.at(OperatorKind::MlpDown).flops == Approx(tp.at(OperatorKind::MlpDown).flops));
  CHECK_FALSE(tp.at(OperatorKind::ExpertAllToAll).present());
  CHECK(ep.at(OperatorKind::ExpertAllToAll).present());
  // A load imbalance of 1.5 gives the busiest GPU 1.5 times the routed work and exchange.
  RooflineOptions skewed = vllm_options(8, true);
  skewed.expert_load_imbalance = 1.5;
  const IterationCost hot = RooflineModel(mixtral, h100, skewed).estimate(decode);
  CHECK(hot.at(OperatorKind::MlpDown).flops == Approx(1.5 * ep.at(OperatorKind::MlpDown).flops));
  CHECK(hot.at(OperatorKind::ExpertAllToAll).bytes ==
        Approx(1.5 * ep.at(OperatorKind::ExpertAllToAll).bytes));
}

TEST_CASE("dense runs with and without node topology are byte-identical", "[app]") {
  test::ScratchDir dir("ep_dense_same");
  const auto bare = profile_with_node(dir, "bare", std::nullopt);
  const auto summary = [&](const std::string& hw, const std::string& name) {
    const auto out = dir.path() / name;
    const auto r =
        test::run_servesim({"run", "--model", "llama-3-8b", "--hw", hw, "--tp", "8",
                            "--num-requests", "200", "--rate", "20", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return test::read_file(out / "requests.csv");
  };
  CHECK(summary("h100-sxm", "topology") == summary(bare.string(), "bare"));
}

TEST_CASE("TP and PP groups larger than a node cross the inter-node link", "[hardware]") {
  const ModelSpec llama = test::shipped_model("llama-3-70b");
  HardwareProfile h100 = test::shipped_hardware("h100-sxm");
  BatchShape decode;
  decode.add_decode(512);
  RooflineOptions o;
  o.parallelism = Parallelism{8, 2};
  const IterationCost in_node = [&] {
    HardwareProfile big = h100;
    big.gpus_per_node = 16;
    return RooflineModel(llama, big, o).estimate(decode);
  }();
  const IterationCost spanning = RooflineModel(llama, h100, o).estimate(decode);
  // TP 8 fits a node of 8: its all-reduce is the same; the PP send crosses the NIC.
  CHECK(spanning.at(OperatorKind::TpAllReduce).time_s ==
        in_node.at(OperatorKind::TpAllReduce).time_s);
  const double bytes = 8192.0 * 2;
  const double nic = h100.inter_node_bandwidth_bytes_per_s * h100.efficiency.gpu_link;
  CHECK(spanning.at(OperatorKind::PpSend).time_s ==
        Approx(std::max(h100.overheads.collective_latency_s, h100.inter_node_latency_s) +
               bytes / nic));
  CHECK(spanning.at(OperatorKind::PpSend).time_s > in_node.at(OperatorKind::PpSend).time_s);
}

TEST_CASE("expert parallelism on a dense model or an EP size that does not divide the experts",
          "[app][bad_input]") {
  test::ScratchDir dir("ep_bad");
  const auto out = (dir.path() / "out").string();
  test::require_error(
      test::run_servesim({"run", "--model", "llama-3-8b", "--enable-expert-parallel",
                          "--num-requests", "1", "--out", out}),
      3, "expert_parallel");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "out"));
  // Mixtral's 8 experts over TP 16 (its 32 heads and 8 KV heads allow TP 16).
  const auto r =
      test::run_servesim({"run", "--model", "mixtral-8x7b", "--tp", "16",
                          "--enable-expert-parallel", "--num-requests", "1", "--out", out});
  test::require_error(r, 3, "does not divide the 8 routed experts");
  test::require_error(test::run_servesim({"run", "--set", "expert_load_imbalance=0.5",
                                          "--num-requests", "1", "--out", out}),
                      3, "expert_load_imbalance");
}

TEST_CASE("servesim roofline shows the EP all-to-all as an operator", "[app][cli]") {
  const auto names = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args{"roofline", "--model", "mixtral-8x7b",   "--hw", "h100-sxm",
                                  "--tp",     "8",       "--decode-batch", "64",   "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_servesim(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = r.json();
    std::vector<std::string> out;
    for (const auto& op : j["operators"])
      out.push_back(op["name"].get<std::string>());
    return std::make_pair(out, j["expert_parallel"].get<bool>());
  };
  const auto [plain, plain_ep] = names({});
  const auto [ep, ep_on] = names({"--enable-expert-parallel"});
  CHECK_FALSE(plain_ep);
  CHECK(ep_on);
  CHECK(std::count(plain.begin(), plain.end(), "ep_all_to_all") == 0);
  CHECK(std::count(ep.begin(), ep.end(), "ep_all_to_all") == 1);
}
