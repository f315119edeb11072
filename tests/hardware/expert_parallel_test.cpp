#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/hardware/expert_parallel.h"
#include "tests/support/test_support.h"

using namespace servesim;

TEST_CASE("EP across two nodes costs more than within one by the bytes over the NIC",
          "[hardware][arch]") {
  const HardwareProfile two_nodes = test::shipped_hardware("h200");  // 8 GPUs per node
  REQUIRE(two_nodes.gpus_per_node == 8);
  HardwareProfile one_node = two_nodes;
  one_node.gpus_per_node = 16;  // the same 16 GPUs in one NVLink domain
  // DeepSeek-V3 shapes: 7,168 hidden, 8 routed experts per token, bf16, EP 16, 256 tokens a GPU.
  ExpertParallelShape s;
  s.tokens = 256;
  s.hidden = 7168;
  s.experts_per_token = 8;
  s.degree = 16;
  const double copies = 256.0 * 8 * 7168 * 2;
  const double link = two_nodes.gpu_link_bandwidth_bytes_per_s * two_nodes.efficiency.gpu_link;
  const double nic = two_nodes.inter_node_bandwidth_bytes_per_s * two_nodes.efficiency.gpu_link;
  const double alpha = two_nodes.overheads.collective_latency_s;

  const AllToAllCost within = expert_parallel_all_to_all(one_node, s);
  CHECK(within.inter_node_bytes == 0);
  CHECK(within.intra_node_bytes == Approx(copies * 15 / 16));
  CHECK(within.time_s == Approx(2 * (alpha + copies * 15 / 16 / link)));

  const AllToAllCost across = expert_parallel_all_to_all(two_nodes, s);
  // 7 of the 16 GPUs share the node, 8 are across the NIC.
  CHECK(across.intra_node_bytes == Approx(copies * 7 / 16));
  CHECK(across.inter_node_bytes == Approx(copies * 8 / 16));
  const double across_s = 2 * (std::max(alpha, two_nodes.inter_node_latency_s) +
                               std::max(copies * 7 / 16 / link, copies * 8 / 16 / nic));
  CHECK(across.time_s == Approx(across_s));
  CHECK(across.time_s > within.time_s);
  // The difference is the NIC transfer of the inter-node half of the copies, twice (dispatch
  // and combine), less what the GPU link no longer carries.
  CHECK(across.time_s - within.time_s ==
        Approx(2 * (copies * 8 / 16 / nic - copies * 15 / 16 / link)));

  // Load imbalance scales the busiest GPU's bytes; EP 1 exchanges nothing.
  s.load_imbalance = 1.5;
  CHECK(expert_parallel_all_to_all(two_nodes, s).inter_node_bytes ==
        Approx(1.5 * across.inter_node_bytes));
  s.degree = 1;
  CHECK(expert_parallel_all_to_all(two_nodes, s).time_s == 0);
}
