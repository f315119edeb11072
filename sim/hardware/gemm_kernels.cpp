#include "sim/hardware/gemm_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {
namespace {

constexpr std::array<std::string_view, kGemmFamilyCount> kNames{"cublas", "cutlass_fp8", "marlin",
                                                                "cutlass_fp4"};

GemmKernel tile(GemmFamily family, double tile_m, double tile_n, bool fitted) noexcept {
  GemmKernel k;
  k.kind = GemmKernelKind::Tile;
  k.family = family;
  k.tile_m = tile_m;
  k.tile_n = tile_n;
  k.fitted = fitted;
  return k;
}

// The smallest power of two at least x (x >= 1).
double next_power_of_two(double x) noexcept {
  return std::exp2(std::ceil(std::log2(x)));
}

// Block-scaled FP8 (vLLM's CUTLASS blockwise dispatch, csrc/quantization/cutlass_w8a8/c3x/
// scaled_mm_blockwise_sm100_fp8_dispatch.cuh): swap A and B below 16 tokens (a 128-column weight
// tile against 16 token columns); otherwise 64-row tiles when ceil(n / 128) x ceil(m / 64) tiles
// fit the SMs, 128-row ones when those do, and the large tile beyond. The same rule prices FP4 on
// Blackwell (block-scaled too, the same tcgen05 tile constraints).
GemmKernel block_scaled_rule(GemmFamily family, double m, double n,
                             const GemmTiling& fitted) noexcept {
  if (m < 16) {
    GemmKernel k = tile(family, 16, 128, false);
    k.kind = GemmKernelKind::SwapAb;
    return k;
  }
  const double sms = fitted.sm_count > 0 ? fitted.sm_count : 1e300;
  const double columns = std::ceil(n / 128);
  if (columns * std::ceil(m / 64) <= sms) return tile(family, 64, 128, false);
  if (columns * std::ceil(m / 128) <= sms) return tile(family, 128, 128, false);
  return tile(family, fitted.tile_m, fitted.tile_n, true);
}

}  // namespace

std::string_view gemm_family_name(GemmFamily family) noexcept {
  return kNames[static_cast<std::size_t>(family)];
}

std::optional<GemmFamily> parse_gemm_family(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kGemmFamilyCount; ++i) {
    if (kNames[i] == name) return static_cast<GemmFamily>(i);
  }
  return std::nullopt;
}

std::string gemm_family_names() {
  std::string names;
  for (const std::string_view name : kNames) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

DType gemm_family_compute_dtype(GemmFamily family, DType activation_dtype) noexcept {
  switch (family) {
    case GemmFamily::CutlassFp8:
      return DType::FP8;
    case GemmFamily::CutlassFp4:
      return DType::FP4;
    case GemmFamily::Cublas:
    case GemmFamily::Marlin:
      break;
  }
  return activation_dtype;
}

std::string_view gemm_kernel_kind_name(GemmKernelKind kind) noexcept {
  switch (kind) {
    case GemmKernelKind::Gemv:
      return "gemv";
    case GemmKernelKind::Tile:
      return "tile";
    case GemmKernelKind::SwapAb:
      return "swap-ab";
    case GemmKernelKind::Grouped:
      return "grouped";
  }
  return "tile";
}

GemmKernel choose_gemm_kernel(GemmFamily family, bool block_scaled, double m, double n,
                              const GemmTiling& fitted, double fp8_cuda_core_tokens) noexcept {
  switch (family) {
    case GemmFamily::Cublas:
      // One token: cuBLAS dispatches a matrix-vector product to its GEMV kernels (no tensor cores).
      // From two tokens on, the tensor-core kernels the profile's ceilings were fitted on (their
      // ramp in m stands for cuBLAS's small-m split-K and tile choices).
      if (m <= 1) {
        GemmKernel k = tile(family, 1, 1, false);
        k.kind = GemmKernelKind::Gemv;
        return k;
      }
      return tile(family, fitted.tile_m, fitted.tile_n, true);
    case GemmFamily::CutlassFp8:
      if (block_scaled) return block_scaled_rule(family, m, n, fitted);
      // Per-tensor FP8: the profile's fitted large-tile pricing at every m. vLLM's CUTLASS
      // dispatch (csrc/quantization/cutlass_w8a8/c3x/scaled_mm_sm90_fp8_dispatch.cuh) runs 64 x 64
      // tiles to 64 tokens and 64 x 128 to 128, but TensorRT-LLM's FP8 decode throughput on H100
      // and H200 at 56 to 120 sequences (trtllm-0.9.0-static-fp8.csv) follows the fitted ramp
      // and tile (MAPE 2.5%; 3.0% on vLLM's tiles, 3.5% on them without the ramp). At m = 1 the
      // ramp would put H100's batch-1 FP8 GEMMs past their knee. Up to 4 tokens TensorRT-LLM runs
      // FP8 GEMMs on the CUDA cores (cudaCoreGemm, kernels/weightOnlyBatchedGemv), a GEMV here,
      // when the engine says so (fp8_cuda_core_tokens); vLLM stays on the tensor cores with
      // 64 x 64 tiles (its sm90 dispatch's configuration for M <= 64; on Blackwell's CUDA
      // cores, which have under a tenth of the FP8 tensor FLOP/s, a GEMV of 4 tokens would be
      // compute-bound and 30% slower than vLLM's measured TPOT at 4 users).
      if (m <= fp8_cuda_core_tokens) {
        GemmKernel k = tile(family, 1, 1, false);
        k.kind = GemmKernelKind::Gemv;
        return k;
      }
      if (m <= 4) return tile(family, 64, 64, false);
      return tile(family, fitted.tile_m, fitted.tile_n, true);
    case GemmFamily::Marlin: {
      // Marlin (IST-DASLab/marlin; vLLM csrc/quantization/gptq_marlin/marlin.cuh, tile_size = 16):
      // 16-row m-blocks, up to four (64 rows) per pass, k striped over the SMs; the weight tile
      // streams once whatever m, so m of 1 to 16 costs one 16-row tile (GEMV-like: memory-bound).
      GemmKernel k = tile(family, 16, 128, false);
      k.persistent = true;
      return k;
    }
    case GemmFamily::CutlassFp4:
      return block_scaled_rule(family, m, n, fitted);
  }
  return tile(family, fitted.tile_m, fitted.tile_n, true);
}

double kernel_idle_flops(const GemmKernel& kernel, double m, double n, double k,
                         double sm_count) noexcept {
  if (kernel.kind == GemmKernelKind::Gemv || !(m > 0) || !(n > 0)) return 0;
  if (kernel.persistent) {
    // Rows padded to the tile; columns are whole tiles of the layer's widths.
    const double rows = std::ceil(m / kernel.tile_m) * kernel.tile_m;
    return 2 * k * (rows - m) * n;
  }
  return gemm_idle_flops(m, n, k, {kernel.tile_m, kernel.tile_n, sm_count});
}

GemmComputeWork gemm_compute_work(const GemmKernel& kernel, double flops, double idle_flops,
                                  double m, double tensor_flops_per_s,
                                  double gemv_flops_per_s) noexcept {
  constexpr double kNoRamp = std::numeric_limits<double>::infinity();
  if (kernel.fitted) return {flops / tensor_flops_per_s, m, idle_flops / tensor_flops_per_s};
  if (kernel.kind == GemmKernelKind::Gemv) return {flops / gemv_flops_per_s, kNoRamp, 0};
  return {(flops + idle_flops) / tensor_flops_per_s, kNoRamp, 0};
}

double grouped_idle_flops(const GemmKernel& kernel, double row_tiles, double copies, double n,
                          double k, double sm_count) noexcept {
  const double tile = kernel.tile_m * kernel.tile_n;
  const double tiles = row_tiles * std::ceil(n / kernel.tile_n);
  const double slots = sm_count > 0 ? std::ceil(tiles / sm_count) * sm_count * tile : tiles * tile;
  return 2 * k * std::max(slots - copies * n, 0.0);
}

double grouped_block_m(GemmFamily family, bool block_scaled, double tokens, double experts,
                       double top_k) noexcept {
  const double per_expert = tokens * top_k / std::max(experts, 1.0);
  switch (family) {
    case GemmFamily::Marlin: {
      // vLLM fused_moe.get_default_config, is_marlin: the first of 8, 16, 32, 48, 64 rows with
      // tokens x top_k / E / block < 0.9.
      for (const double block : {8.0, 16.0, 32.0, 48.0}) {
        if (per_expert / block < 0.9) return block;
      }
      return 64;
    }
    case GemmFamily::CutlassFp4: {
      // FlashInfer / TensorRT-LLM MoE (vLLM calculate_tile_tokens_dim): tokens per expert times an
      // imbalance of 1.3, to the next power of two, within [8, 64].
      return std::clamp(next_power_of_two(std::max(per_expert * 1.3, 1.0)), 8.0, 64.0);
    }
    case GemmFamily::CutlassFp8:
      // Block-scaled FP8 experts: BLOCK_SIZE_M 64 (get_default_config, block_shape given).
      if (block_scaled) return 64;
      [[fallthrough]];
    case GemmFamily::Cublas:
      // vLLM fused_moe.get_default_config: BLOCK_SIZE_M 16 while M <= E, else 64.
      return tokens <= experts ? 16 : 64;
  }
  return 64;
}

}  // namespace servesim
