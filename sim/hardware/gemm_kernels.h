#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "sim/hardware/kernel_work.h"
#include "sim/model/dtype.h"

namespace servesim {

// The GEMM kernel families a serving engine dispatches a layer's matrices to, by the format of
// their weights (docs/cost_model.md, "GEMM kernels by M"):
//   cublas       16-bit weights and activations (cuBLAS, CUTLASS)
//   cutlass_fp8  FP8 weights and activations on FP8 tensor cores (CUTLASS scaled_mm, per
//                tensor or block-scaled)
//   marlin       weights stored narrow (int4, int8, fp8 or fp4) and dequantised to 16 bits
//                inside the kernel, on 16-bit tensor cores (Marlin, Machete)
//   cutlass_fp4  FP4 weights and activations on Blackwell's FP4 tensor cores (NVFP4, MXFP4)
enum class GemmFamily { Cublas, CutlassFp8, Marlin, CutlassFp4 };
inline constexpr std::size_t kGemmFamilyCount = 4;
std::string_view gemm_family_name(GemmFamily family) noexcept;
std::optional<GemmFamily> parse_gemm_family(std::string_view name) noexcept;
// "cublas, cutlass_fp8, marlin, cutlass_fp4", for error messages.
std::string gemm_family_names();
// The tensor-core format a family computes in (16-bit for cublas and marlin).
DType gemm_family_compute_dtype(GemmFamily family, DType activation_dtype) noexcept;

// How the chosen kernel covers an [m x k] x [k x n] GEMM of m tokens.
enum class GemmKernelKind {
  Gemv,     // matrix-vector: no tensor-core tile, CUDA cores stream the weight once
  Tile,     // output tiles of tile_m tokens x tile_n columns
  SwapAb,   // the weight on the MMA's wide side, tile_m tokens on its narrow one
  Grouped,  // one launch over every expert's tokens, each expert's padded to tile_m rows
};
std::string_view gemm_kernel_kind_name(GemmKernelKind kind) noexcept;

// One GEMM's kernel choice and how it is priced.
struct GemmKernel {
  GemmKernelKind kind = GemmKernelKind::Tile;
  GemmFamily family = GemmFamily::Cublas;
  double tile_m = 128;  // rows (tokens) one tile computes: m is padded to a multiple of it
  double tile_n = 128;  // columns one tile computes
  // The large-tile kernels a profile's GEMM ceilings were fitted on: priced as before this model,
  // with the fitted ramp (compute_half_size) and quantization_weight on the idle slots. Otherwise
  // the kernel is priced from its tiles alone: useful plus padded FLOPs at the class's compute
  // efficiency, no ramp (the kernel was chosen for this m).
  bool fitted = true;
  // Marlin splits the k dimension over the SMs (striped partition) instead of running tiles in
  // waves: no idle SMs in a last wave, only the padding of its 16-row tiles.
  bool persistent = false;
};

// The kernel `family` runs for m tokens against an n-column weight on `sm_count` SMs. `fitted` is
// the profile's tiling (kernels.gemm*.tile_m, tile_n), used by the large-m kernels; `block_scaled`:
// FP8 weights with block scales (DeepSeek's 128 x 128); `fp8_cuda_core_tokens`: per-tensor FP8
// GEMMs of at most that many tokens run on the CUDA cores (the engine's choice, 0: none).
GemmKernel choose_gemm_kernel(GemmFamily family, bool block_scaled, double m, double n,
                              const GemmTiling& fitted, double fp8_cuda_core_tokens) noexcept;

// FLOPs `kernel` computes beyond the useful 2 m n k: the padding of its edge tiles and, unless it
// is persistent, the slots of the SMs left idle in its last wave (gemm_idle_flops). A GEMV computes
// none.
double kernel_idle_flops(const GemmKernel& kernel, double m, double n, double k,
                         double sm_count) noexcept;

// The compute side of one GEMM run by `kernel`, at the datasheet peaks, as
// KernelCeilings::compute_s(peak_s, size, 0, idle_peak_s) scales it (the roofline's layers and
// single measured records alike):
//   fitted kernel   its useful FLOPs at `tensor_flops_per_s` with the class's ramp in m, its idle
//                   slots at the class's quantization weight;
//   chosen for m    every slot of its tiles (useful plus `idle_flops`) at the class's efficiency,
//                   no ramp: size is infinite;
//   GEMV            its FLOPs on the CUDA cores (`gemv_flops_per_s`), no ramp.
struct GemmComputeWork {
  double peak_s = 0;
  double size = 0;
  double idle_peak_s = 0;
};
GemmComputeWork gemm_compute_work(const GemmKernel& kernel, double flops, double idle_flops,
                                  double m, double tensor_flops_per_s,
                                  double gemv_flops_per_s) noexcept;

// FLOPs a grouped GEMM computes beyond the useful 2 x copies x n x k: one launch over
// `row_tiles` row tiles (every expert's rows padded to kernel.tile_m) times ceil(n / tile_n)
// column tiles, in waves of one tile per SM (padding alone when sm_count is 0).
double grouped_idle_flops(const GemmKernel& kernel, double row_tiles, double copies, double n,
                          double k, double sm_count) noexcept;

// The grouped (fused-MoE) kernel's rows per tile, by the step's tokens B routed top-k over E
// experts (the rules of vLLM's fused_moe default configs, Marlin MoE and FlashInfer's TensorRT-LLM
// MoE; sources in gemm_kernels.cpp).
double grouped_block_m(GemmFamily family, bool block_scaled, double tokens, double experts,
                       double top_k) noexcept;
// Output columns per grouped tile (vLLM's fused_moe default BLOCK_SIZE_N: 64).
inline constexpr double kGroupedTileN = 64;

}  // namespace servesim
