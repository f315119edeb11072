#include <catch2/catch.hpp>

#include <vector>

#include "sim/app/policies.h"
#include "sim/core/error.h"

using namespace servesim;

namespace {

// A replica with `outstanding` unfinished requests and `used` of its 100 KV slots in use.
ReplicaView replica(std::int32_t id, std::int64_t outstanding, std::int64_t used) {
  ReplicaView v;
  v.replica = id;
  v.outstanding_requests = outstanding;
  v.kv_capacity_tokens = 100;
  v.kv_used_tokens = used;
  v.kv_free_tokens = 100 - used;
  return v;
}

std::int32_t route(const char* name, const std::vector<ReplicaView>& loads) {
  const RngStreams streams(1);
  auto router = router_registry().find(name, "router").factory(streams, RunConfig::Routing{});
  return router->route(RequestSpec{}, loads);
}

}  // namespace

TEST_CASE("routers pick by their rule", "[cluster]") {
  const std::vector<ReplicaView> loads{replica(0, 5, 90), replica(1, 2, 50), replica(2, 2, 10),
                                       replica(3, 7, 10)};
  CHECK(route("least_outstanding", loads) == 1);  // fewest unfinished, lowest index on ties
  CHECK(route("least_kv", loads) == 2);           // least KV, then fewest unfinished
  CHECK(route("round_robin", loads) == 0);
  const RngStreams streams(1);
  auto round_robin =
      router_registry().find("round_robin", "router").factory(streams, RunConfig::Routing{});
  std::vector<std::int32_t> picks;
  for (int i = 0; i < 5; ++i)
    picks.push_back(round_robin->route(RequestSpec{}, loads));
  CHECK(picks == std::vector<std::int32_t>{0, 1, 2, 3, 0});
  auto random = router_registry().find("random", "router").factory(streams, RunConfig::Routing{});
  std::vector<int> counts(4, 0);
  for (int i = 0; i < 4000; ++i)
    counts[static_cast<std::size_t>(random->route(RequestSpec{}, loads))]++;
  for (const int c : counts)
    CHECK(c == Approx(1000).epsilon(0.1));
}

TEST_CASE("unknown policy names list the valid ones", "[cluster]") {
  REQUIRE_THROWS_WITH(
      router_registry().find("fastest", "router"),
      Catch::Contains("unknown router \"fastest\"") &&
          Catch::Contains("round_robin, least_outstanding, least_kv, prefix_aware, random"));
  REQUIRE_THROWS_WITH(scheduler_registry().find("fifo", "scheduler.name"),
                      Catch::Contains("scheduler.name") && Catch::Contains("vllm"));
  REQUIRE_THROWS_AS(allocator_registry().find("slab", "allocator.name"), InputError);
}
