#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/hardware/gemm_kernels.h"
#include "sim/hardware/moe_routing.h"

using namespace servesim;

namespace {

const GemmTiling kProfileTile{128, 128, 132};

// E[ceil(X / block)] for X ~ Binomial(n, p) from its definition: the mass function in log space
// (lgamma), every x from 0 to n.
double brute_force_row_tiles(int n, double p, double block) {
  double expected = 0;
  for (int x = 0; x <= n; ++x) {
    const double log_mass = std::lgamma(n + 1.0) - std::lgamma(x + 1.0) - std::lgamma(n - x + 1.0) +
                            x * std::log(p) + (n - x) * std::log1p(-p);
    expected += std::exp(log_mass) * std::ceil(x / block);
  }
  return expected;
}

}  // namespace

TEST_CASE("cublas: a GEMV for one token, the profile's fitted tile from two", "[gemm_kernels]") {
  const GemmKernel one = choose_gemm_kernel(GemmFamily::Cublas, false, 1, 4096, kProfileTile, 0);
  CHECK(one.kind == GemmKernelKind::Gemv);
  CHECK_FALSE(one.fitted);
  CHECK(kernel_idle_flops(one, 1, 4096, 4096, 132) == 0);
  const GemmKernel two = choose_gemm_kernel(GemmFamily::Cublas, false, 2, 4096, kProfileTile, 0);
  CHECK(two.kind == GemmKernelKind::Tile);
  CHECK(two.fitted);
  CHECK(two.tile_m == 128);
  CHECK(two.tile_n == 128);
}

TEST_CASE("per-tensor fp8: a GEMV to 4 tokens where the engine says so, then the fitted tile",
          "[gemm_kernels]") {
  // Up to 4 tokens a CUDA-core GEMV where the engine runs one (TensorRT-LLM's cudaCoreGemm),
  // else 64 x 64 tensor-core tiles (vLLM's CUTLASS); the fitted tile from 5 tokens either way.
  CHECK(choose_gemm_kernel(GemmFamily::CutlassFp8, false, 4, 4096, kProfileTile, 4).kind ==
        GemmKernelKind::Gemv);
  for (const double m : {1.0, 4.0}) {
    const GemmKernel k =
        choose_gemm_kernel(GemmFamily::CutlassFp8, false, m, 4096, kProfileTile, 0);
    CHECK(k.kind == GemmKernelKind::Tile);
    CHECK_FALSE(k.fitted);
    CHECK(k.tile_m == 64);
    CHECK(k.tile_n == 64);
  }
  CHECK(choose_gemm_kernel(GemmFamily::CutlassFp8, false, 5, 4096, kProfileTile, 4).fitted);
  for (const double m : {5.0, 64.0, 128.0, 4096.0}) {
    const GemmKernel k =
        choose_gemm_kernel(GemmFamily::CutlassFp8, false, m, 4096, kProfileTile, 0);
    CHECK(k.fitted);
    CHECK(k.tile_m == 128);
    CHECK(k.tile_n == 128);
  }
  // A 64 x 64 tile (block-scaled rule below) with one token: n = 128 is two tiles, one wave of
  // 4 SMs (4 x 64 x 64 slots), so 2 k (16384 - 128) idle FLOPs.
  GemmKernel small;
  small.tile_m = 64;
  small.tile_n = 64;
  CHECK(kernel_idle_flops(small, 1, 128, 10, 4) == 2.0 * 10 * (4 * 64 * 64 - 128));
}

TEST_CASE("block-scaled fp8 and fp4 swap A and B below 16 tokens, then fill the SMs",
          "[gemm_kernels]") {
  for (const GemmFamily family : {GemmFamily::CutlassFp8, GemmFamily::CutlassFp4}) {
    const auto at = [&](double m) {
      return choose_gemm_kernel(family, true, m, 4096, kProfileTile, 0);
    };
    CHECK(at(8).kind == GemmKernelKind::SwapAb);
    CHECK(at(8).tile_m == 16);
    CHECK(at(8).tile_n == 128);
    // n = 4096: 32 column tiles. 32 tokens: 32 x 1 tiles of 64 rows fit 132 SMs.
    CHECK(at(32).tile_m == 64);
    CHECK_FALSE(at(32).fitted);
    // 512 tokens: 32 x 8 = 256 tiles of 64 rows do not fit, 32 x 4 = 128 of 128 rows do.
    CHECK(at(512).tile_m == 128);
    CHECK_FALSE(at(512).fitted);
    // 1024 tokens: 32 x 8 = 256 tiles of 128 rows: the fitted large tile.
    CHECK(at(1024).fitted);
  }
}

TEST_CASE("marlin pads tokens to 16-row tiles and has no wave quantization", "[gemm_kernels]") {
  const GemmKernel k = choose_gemm_kernel(GemmFamily::Marlin, false, 1, 4096, kProfileTile, 0);
  CHECK(k.tile_m == 16);
  CHECK(k.persistent);
  CHECK_FALSE(k.fitted);
  // One token: 15 padded rows of a 4096 x 4096 weight, 2 x 4096 x 15 x 4096 FLOPs.
  CHECK(kernel_idle_flops(k, 1, 4096, 4096, 132) == 2.0 * 4096 * 15 * 4096);
  CHECK(kernel_idle_flops(k, 16, 4096, 4096, 132) == 0);
  CHECK(kernel_idle_flops(k, 17, 4096, 4096, 132) == 2.0 * 4096 * 15 * 4096);
}

TEST_CASE("grouped MoE tiles follow the engines' block rules", "[gemm_kernels]") {
  // vLLM fused_moe default: 16 rows while tokens <= experts, else 64.
  CHECK(grouped_block_m(GemmFamily::Cublas, false, 16, 128, 8) == 16);
  CHECK(grouped_block_m(GemmFamily::Cublas, false, 128, 128, 8) == 16);
  CHECK(grouped_block_m(GemmFamily::Cublas, false, 129, 128, 8) == 64);
  CHECK(grouped_block_m(GemmFamily::CutlassFp8, true, 1, 256, 8) == 64);
  // Marlin MoE: 16 tokens x 8 / 128 = 1 per expert: 1 / 8 < 0.9, block 8; 256 tokens: 16 per
  // expert: 16 / 16 = 1 >= 0.9, 16 / 32 = 0.5: block 32.
  CHECK(grouped_block_m(GemmFamily::Marlin, false, 16, 128, 8) == 8);
  CHECK(grouped_block_m(GemmFamily::Marlin, false, 256, 128, 8) == 32);
  CHECK(grouped_block_m(GemmFamily::Marlin, false, 4096, 128, 8) == 64);
  // FlashInfer: 1.3 x tokens per expert to a power of two in [8, 64].
  CHECK(grouped_block_m(GemmFamily::CutlassFp4, false, 16, 128, 8) == 8);
  CHECK(grouped_block_m(GemmFamily::CutlassFp4, false, 640, 128, 8) == 64);  // 40 -> 52 -> 64
  CHECK(grouped_block_m(GemmFamily::CutlassFp4, false, 320, 128, 8) == 32);  // 20 -> 26 -> 32
}

TEST_CASE("expected row tiles of binomial routing against hand computations", "[moe_routing]") {
  // 16 tokens, p = 1/16, 16-row tiles: an expert has a tile exactly when it has a token.
  CHECK(expected_row_tiles(16, 1.0 / 16, 16) == Approx(1 - std::pow(15.0 / 16, 16)));
  // X ~ Binomial(4, 1/2) in 2-row tiles: masses 1, 4, 6, 4, 1 (/16) over 0, 1, 1, 2, 2 tiles.
  CHECK(expected_row_tiles(4, 0.5, 2) == Approx(20.0 / 16));
  // Every token to every expert: ceil(n / block).
  CHECK(expected_row_tiles(100, 1, 64) == 2);
  CHECK(expected_row_tiles(0, 0.5, 16) == 0);
  // Large batches (the sum starts from the mode in log space): as the definition.
  for (const int n : {500, 2048, 8192, 30000}) {
    for (const double block : {16.0, 64.0}) {
      INFO(n << " tokens, " << block << "-row tiles");
      CHECK(expected_row_tiles(n, 1.0 / 16, block) ==
            Approx(brute_force_row_tiles(n, 1.0 / 16, block)).epsilon(1e-9));
    }
  }
}

TEST_CASE("routing a decode batch over qwen3-30b-a3b's experts", "[moe_routing]") {
  // 16 tokens, top-8 of 128 experts: E (1 - (1 - 1/16)^16) = 82.43 experts touched, 128 copies over
  // them (1.553 each), each in one 16-row tile.
  const MoeRouting r = route_tokens(16, 8.0 / 128, 128, 16);
  const double touched = 1 - std::pow(15.0 / 16, 16);
  CHECK(r.experts_touched == Approx(128 * touched));
  CHECK(r.experts_touched == Approx(82.43).epsilon(1e-3));
  CHECK(r.tokens_per_expert == Approx(16 * 8.0 / 128 / touched));
  CHECK(r.tokens_per_expert == Approx(1.553).epsilon(1e-3));
  CHECK(r.row_tiles == Approx(r.experts_touched));
  // One token: exactly k experts, one token each.
  const MoeRouting one = route_tokens(1, 8.0 / 128, 128, 16);
  CHECK(one.experts_touched == Approx(8));
  CHECK(one.tokens_per_expert == Approx(1));
}
