#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "validation/shapes.h"

namespace servesim::validation {

// A cuBLASLt handle, owned.
class LtHandle {
 public:
  LtHandle();
  ~LtHandle();
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

// What cuBLASLt's heuristic chose, in its own ids (cublasLt.h: the algorithm's configuration
// attributes); it names no kernel, so these are the identity the harness can report.
struct LtAlgoChoice {
  std::int32_t algo_id = -1;
  std::uint32_t tile_id = 0;    // cublasLtMatmulTile_t (0: undefined)
  std::uint32_t stages_id = 0;  // cublasLtMatmulStages_t (0: undefined)
  std::int32_t split_k = 1;
  std::size_t workspace_bytes = 0;  // what the algorithm needs of the workspace
  float waves = 0.0f;               // the heuristic's estimate of waves over the SMs
};

// One FP8 GEMM of `shape` (shape.fp8, in the layout of fp8_gemm_layout.h): e4m3 activations and
// weights, one fp32 scale per tensor read from device memory (CUBLASLT_MATMUL_DESC_A/B_SCALE_
// POINTER), fp32 accumulation (CUBLAS_COMPUTE_32F, scale type CUDA_R_32F), output in shape.dtype.
// The descriptors and the algorithm are made once, here, as engines cache them, so a run is one
// cublasLtMatmul. The algorithm is the first of cublasLtMatmulAlgoGetHeuristic for a workspace of
// `workspace_bytes`; where cuBLASLt offers none for shape.m rows, m rounded up to 16 is tried
// (rows()). Throws HarnessFailure on a cuBLASLt error or when no algorithm is offered.
class Fp8Matmul {
 public:
  Fp8Matmul(cublasLtHandle_t handle, const GemmShape& shape, const float* activation_scale,
            const float* weight_scale, std::size_t workspace_bytes);
  ~Fp8Matmul();
  Fp8Matmul(const Fp8Matmul&) = delete;
  Fp8Matmul& operator=(const Fp8Matmul&) = delete;

  // The token rows the kernel computes: shape.m, or shape.m rounded up to 16.
  std::int64_t rows() const { return rows_; }
  const LtAlgoChoice& choice() const { return choice_; }

  // a: rows() x k e4m3, w: n x k e4m3, c: rows() x n in shape.dtype, all row-major device memory
  // aligned to 16 bytes; enqueued on `stream` (nullptr: the legacy default stream) with a
  // workspace of at least the constructor's workspace_bytes.
  void run(const void* a, const void* w, void* c, void* workspace, cudaStream_t stream) const;

 private:
  bool choose_algorithm(std::int64_t rows);  // false: cuBLASLt offers none for `rows`
  void release() noexcept;

  cublasLtHandle_t handle_ = nullptr;
  GemmShape shape_;
  std::size_t workspace_bytes_ = 0;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t weights_ = nullptr;      // cuBLASLt's A
  cublasLtMatrixLayout_t activations_ = nullptr;  // cuBLASLt's B
  cublasLtMatrixLayout_t output_ = nullptr;       // cuBLASLt's C and D
  cublasLtMatmulAlgo_t algo_{};
  std::int64_t rows_ = 0;
  LtAlgoChoice choice_;
};

// "gemm fp8 qkv m=16 n=6144 k=4096 (bf16 output)".
std::string describe_fp8_gemm(const GemmShape& shape);

// One line on what cuBLASLt chose for `matmul` (ids, split-k, workspace) and whether m was
// padded, for standard error.
std::string describe_choice(const GemmShape& shape, const Fp8Matmul& matmul);

// Runs `matmul` once on fresh random e4m3 data (finite: kFp8FiniteMask) and compares sampled
// entries with reference_fp8_gemm_entry at kFp8TestActivationScale and kFp8TestWeightScale, the
// scales `matmul` must have been given; throws HarnessFailure naming the shape and the worst entry
// when they differ by more than the output format's tolerance.
void verify_fp8_gemm(const Fp8Matmul& matmul, const GemmShape& shape, void* workspace);

}  // namespace servesim::validation
