// Where a disaggregated deployment's replicas sit, which decides the link of each pair.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/app/disaggregated_pools.h"

namespace {

using servesim::replica_nodes;
using Nodes = std::vector<std::int64_t>;

TEST_CASE("replicas fill nodes in order, prefill first, each whole in one node", "[app]") {
  // 2p2d at TP 4 on 8-GPU nodes: one node of prefill, one of decode.
  CHECK(replica_nodes({"h100-sxm", 8, 4, 2}, {"h100-sxm", 8, 4, 2}) == Nodes{0, 0, 1, 1});
  // 1p1d at TP 4: one node.
  CHECK(replica_nodes({"h100-sxm", 8, 4, 1}, {"h100-sxm", 8, 4, 1}) == Nodes{0, 0});
  // 2p3d at TP 2: two decode replicas beside the prefill ones, the third in the next node.
  CHECK(replica_nodes({"h100-sxm", 8, 2, 2}, {"h100-sxm", 8, 2, 3}) == Nodes{0, 0, 0, 0, 1});
  // A replica that does not fit the rest of a node starts the next: TP 2 then TP 8.
  CHECK(replica_nodes({"h100-sxm", 8, 2, 1}, {"h100-sxm", 8, 8, 1}) == Nodes{0, 1});
}

TEST_CASE("other hardware starts a node of its own, and a replica larger than a node spans nodes",
          "[app]") {
  CHECK(replica_nodes({"h100-sxm", 8, 4, 1}, {"h200", 8, 4, 1}) == Nodes{0, 1});
  // TP 16 on 8-GPU nodes spans nodes 0 and 1; the decode replica goes to node 2.
  CHECK(replica_nodes({"h100-sxm", 8, 16, 1}, {"h100-sxm", 8, 8, 1}) == Nodes{-1, 2});
  CHECK(replica_nodes({"h100-sxm", 8, 2, 1}, {"h100-sxm", 8, 16, 1}) == Nodes{0, -1});
}

}  // namespace
