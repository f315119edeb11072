#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servesim::validation {

// Routing for `moe-gemm`: which experts a step's tokens go to and how a grouped GEMM lays out
// their rows. A routed row is a (token, slot) pair, numbered token x top_k + slot as in vLLM's
// fused MoE (its output row); the kernel computes each touched expert's rows in tiles of
// `tile_rows`, the last tile of an expert padded.

// Top-k routing of `tokens` tokens over `experts` experts, uniform and deterministic for a seed:
// routes[token x top_k + slot] is the expert of that slot; a token's top_k experts are distinct
// (a partial Fisher-Yates shuffle per token). Throws std::invalid_argument unless tokens >= 1
// and 1 <= top_k <= experts.
std::vector<std::int32_t> route_top_k(std::int64_t tokens, std::int64_t experts, std::int64_t top_k,
                                      std::uint64_t seed);

struct ExpertGroups {
  std::int64_t tile_rows = 16;
  std::int64_t routed_rows = 0;               // tokens x top_k
  std::vector<std::int32_t> experts_touched;  // ascending ids of experts with a routed row
  std::vector<std::int64_t> rows_per_expert;  // routed rows of each touched expert, same order
  std::int64_t padded_rows = 0;               // sum over touched experts of ceil(rows / tile) tile
  // padded_rows entries, expert by expert in ascending order, each expert's rows in pair order,
  // then -1 for its padding up to a whole tile.
  std::vector<std::int32_t> sorted_pairs;
  std::vector<std::int32_t> tile_experts;  // the expert of each tile (padded_rows / tile_rows)
};

// Groups `routes` (from route_top_k, top_k slots per token) by expert. Throws
// std::invalid_argument on an expert id outside [0, experts), a routes size that is not a
// multiple of top_k, or tile_rows < 1.
ExpertGroups group_by_expert(std::span<const std::int32_t> routes, std::int64_t experts,
                             std::int64_t top_k, std::int64_t tile_rows);

}  // namespace servesim::validation
