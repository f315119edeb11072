#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <vector>

#include "sim/hardware/moe_routing.h"
#include "validation/expert_routing.h"

namespace sv = servesim::validation;

TEST_CASE("top-k routing gives each token k distinct experts, the same for a seed",
          "[validation][moe]") {
  const auto routes = sv::route_top_k(50, 16, 4, 7);
  REQUIRE(routes.size() == 200);
  for (std::size_t t = 0; t < 50; ++t) {
    const std::set<std::int32_t> own(routes.begin() + static_cast<std::ptrdiff_t>(4 * t),
                                     routes.begin() + static_cast<std::ptrdiff_t>(4 * t + 4));
    CHECK(own.size() == 4);
    CHECK(*own.begin() >= 0);
    CHECK(*own.rbegin() < 16);
  }
  CHECK(routes == sv::route_top_k(50, 16, 4, 7));
  CHECK(routes != sv::route_top_k(50, 16, 4, 8));
  // All experts: every token is a permutation.
  const auto all = sv::route_top_k(3, 5, 5, 1);
  for (std::size_t t = 0; t < 3; ++t) {
    std::vector<std::int32_t> own(all.begin() + static_cast<std::ptrdiff_t>(5 * t),
                                  all.begin() + static_cast<std::ptrdiff_t>(5 * t + 5));
    std::sort(own.begin(), own.end());
    CHECK(own == std::vector<std::int32_t>{0, 1, 2, 3, 4});
  }
  CHECK_THROWS_AS(sv::route_top_k(1, 4, 5, 1), std::invalid_argument);
  CHECK_THROWS_AS(sv::route_top_k(0, 4, 2, 1), std::invalid_argument);
  CHECK_THROWS_AS(sv::route_top_k(1, 4, 0, 1), std::invalid_argument);
}

TEST_CASE("top-k routing is uniform over the experts", "[validation][moe]") {
  // 8000 tokens, top-2 of 8: each expert expects 2000 rows, standard deviation about 39.
  const auto routes = sv::route_top_k(8000, 8, 2, 3);
  std::vector<int> counts(8, 0);
  for (const std::int32_t e : routes)
    ++counts[static_cast<std::size_t>(e)];
  for (const int count : counts)
    CHECK(std::abs(count - 2000) < 200);
}

TEST_CASE("grouping by expert pads each expert's rows to whole tiles (hand computed)",
          "[validation][moe]") {
  // Three tokens, top-2 of 4 experts: token 0 -> {0, 2}, token 1 -> {2, 3}, token 2 -> {2, 0}.
  // Pairs (token x 2 + slot): expert 0 has pairs 0, 5; expert 2 has 1, 2, 4; expert 3 has 3.
  const std::vector<std::int32_t> routes{0, 2, 2, 3, 2, 0};
  const sv::ExpertGroups four = sv::group_by_expert(routes, 4, 2, 4);
  CHECK(four.routed_rows == 6);
  CHECK(four.experts_touched == std::vector<std::int32_t>{0, 2, 3});
  CHECK(four.rows_per_expert == std::vector<std::int64_t>{2, 3, 1});
  CHECK(four.padded_rows == 12);  // 4 + 4 + 4
  CHECK(four.sorted_pairs == std::vector<std::int32_t>{0, 5, -1, -1, 1, 2, 4, -1, 3, -1, -1, -1});
  CHECK(four.tile_experts == std::vector<std::int32_t>{0, 2, 3});

  const sv::ExpertGroups two = sv::group_by_expert(routes, 4, 2, 2);
  CHECK(two.padded_rows == 8);  // 2 + 4 + 2
  CHECK(two.sorted_pairs == std::vector<std::int32_t>{0, 5, 1, 2, 4, -1, 3, -1});
  CHECK(two.tile_experts == std::vector<std::int32_t>{0, 2, 2, 3});

  // A tile of one row pads nothing.
  CHECK(sv::group_by_expert(routes, 4, 2, 1).padded_rows == 6);

  CHECK_THROWS_AS(sv::group_by_expert(std::vector<std::int32_t>{0, 4}, 4, 2, 16),
                  std::invalid_argument);
  CHECK_THROWS_AS(sv::group_by_expert(std::vector<std::int32_t>{0, 1, 2}, 4, 2, 16),
                  std::invalid_argument);
  CHECK_THROWS_AS(sv::group_by_expert(routes, 4, 2, 0), std::invalid_argument);
}

TEST_CASE("one token touches exactly top_k experts, one tile each", "[validation][moe]") {
  const auto routes = sv::route_top_k(1, 128, 8, 42);
  const sv::ExpertGroups groups = sv::group_by_expert(routes, 128, 8, 16);
  CHECK(groups.experts_touched.size() == 8);
  CHECK(groups.padded_rows == 8 * 16);
  CHECK(groups.tile_experts.size() == 8);
}

TEST_CASE("routed groups average to the simulator's expected experts and row tiles",
          "[validation][moe]") {
  // qwen3-30b-a3b's layer at 16 tokens: 128 experts, top-8, 16-row tiles. The simulator
  // expects 82.4 experts touched (docs/cost_model.md, "MoE routing").
  constexpr int kSeeds = 300;
  double touched = 0.0;
  double tiles = 0.0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const auto routes = sv::route_top_k(16, 128, 8, static_cast<std::uint64_t>(seed));
    const sv::ExpertGroups groups = sv::group_by_expert(routes, 128, 8, 16);
    touched += static_cast<double>(groups.experts_touched.size());
    tiles += static_cast<double>(groups.tile_experts.size());
  }
  const servesim::MoeRouting expected = servesim::route_tokens(16, 8.0 / 128.0, 128, 16);
  CHECK(expected.experts_touched == Approx(82.4).margin(0.1));
  CHECK(touched / kSeeds == Approx(expected.experts_touched).margin(1.0));
  CHECK(tiles / kSeeds == Approx(expected.row_tiles).margin(1.0));
}
