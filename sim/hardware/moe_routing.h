#pragma once

namespace servesim {

// Uniform top-k routing of B tokens over E experts: each token picks k distinct experts, so a given
// expert receives X ~ Binomial(B, k / E) of the step's tokens. What a grouped GEMM over one GPU's
// experts depends on (docs/cost_model.md, "MoE routing"):
struct MoeRouting {
  // Experts with at least one token, E (1 - (1 - k/E)^B) (over the GPU's local experts): the only
  // ones whose weights are read.
  double experts_touched = 0;
  // Routed token copies per touched expert (B k / E over P(X >= 1)).
  double tokens_per_expert = 0;
  // Expected row tiles of `block_m` rows summed over the local experts, sum E[ceil(X / block_m)]:
  // the spread of X decides the padding (1.3 tokens on average still cost a whole tile, and some
  // experts get 3 where others get 0).
  double row_tiles = 0;
};

// `tokens` B routed with probability `p` = k / E to each of `local_experts` experts (E / EP
// with expert parallelism; p may carry the busiest GPU's load imbalance, capped at 1), tiles
// of `block_m` rows.
MoeRouting route_tokens(double tokens, double p, double local_experts, double block_m) noexcept;

// E[ceil(X / block_m)] for X ~ Binomial(n, p): sum over j >= 0 of P(X > j block_m).
double expected_row_tiles(double n, double p, double block_m) noexcept;

}  // namespace servesim
