#include "validation/expert_routing.h"

#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "validation/cpu_reference.h"

namespace servesim::validation {

std::vector<std::int32_t> route_top_k(std::int64_t tokens, std::int64_t experts, std::int64_t top_k,
                                      std::uint64_t seed) {
  if (tokens < 1 || top_k < 1 || top_k > experts) {
    throw std::invalid_argument("route_top_k: expected tokens >= 1 and 1 <= top_k <= experts");
  }
  const auto e = static_cast<std::uint64_t>(experts);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(experts));
  std::vector<std::int32_t> routes;
  routes.reserve(static_cast<std::size_t>(tokens * top_k));
  std::uint64_t state = seed;
  for (std::int64_t t = 0; t < tokens; ++t) {
    // A fresh identity per token, so a token's draw does not depend on the previous ones' order.
    std::iota(ids.begin(), ids.end(), 0);
    for (std::uint64_t slot = 0; slot < static_cast<std::uint64_t>(top_k); ++slot) {
      // The modulo bias of 64-bit draws over at most a few thousand experts is below 1e-15.
      const std::uint64_t pick = slot + next_random(state) % (e - slot);
      std::swap(ids[slot], ids[pick]);
      routes.push_back(ids[slot]);
    }
  }
  return routes;
}

ExpertGroups group_by_expert(std::span<const std::int32_t> routes, std::int64_t experts,
                             std::int64_t top_k, std::int64_t tile_rows) {
  if (top_k < 1 || tile_rows < 1 || routes.size() % static_cast<std::size_t>(top_k) != 0) {
    throw std::invalid_argument(
        "group_by_expert: expected top_k >= 1, tile_rows >= 1 and whole tokens of top_k routes");
  }
  std::vector<std::vector<std::int32_t>> rows(static_cast<std::size_t>(experts));
  for (std::size_t pair = 0; pair < routes.size(); ++pair) {
    const std::int32_t expert = routes[pair];
    if (expert < 0 || expert >= experts) {
      throw std::invalid_argument("group_by_expert: expert id " + std::to_string(expert) +
                                  " outside [0, " + std::to_string(experts) + ")");
    }
    rows[static_cast<std::size_t>(expert)].push_back(static_cast<std::int32_t>(pair));
  }
  ExpertGroups groups;
  groups.tile_rows = tile_rows;
  groups.routed_rows = static_cast<std::int64_t>(routes.size());
  for (std::size_t expert = 0; expert < rows.size(); ++expert) {
    const std::vector<std::int32_t>& own = rows[expert];
    if (own.empty()) continue;
    const auto count = static_cast<std::int64_t>(own.size());
    const std::int64_t tiles = (count + tile_rows - 1) / tile_rows;
    groups.experts_touched.push_back(static_cast<std::int32_t>(expert));
    groups.rows_per_expert.push_back(count);
    groups.padded_rows += tiles * tile_rows;
    groups.sorted_pairs.insert(groups.sorted_pairs.end(), own.begin(), own.end());
    groups.sorted_pairs.insert(groups.sorted_pairs.end(),
                               static_cast<std::size_t>(tiles * tile_rows - count), -1);
    groups.tile_experts.insert(groups.tile_experts.end(), static_cast<std::size_t>(tiles),
                               static_cast<std::int32_t>(expert));
  }
  return groups;
}

}  // namespace servesim::validation
