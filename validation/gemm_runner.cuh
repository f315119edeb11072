#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "validation/shapes.h"

namespace servesim::validation {

// cuBLAS GEMMs in the serving layout: C[m x n] = A[m x k] . W[n x k]^T, all row-major
// 16-bit, fp32 accumulation (cublasGemmEx with CUBLAS_COMPUTE_32F).
class GemmRunner {
 public:
  GemmRunner();
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  // Device pointers; enqueued on the default stream, or the one use_stream gave. Throws
  // HarnessFailure on a cuBLAS error.
  void run(const GemmShape& shape, const void* a, const void* w, void* c) const;

  // Enqueues later runs on `stream` with a workspace of the caller's (cuBLAS resets its workspace
  // when the stream changes; a workspace of one's own keeps cuBLAS from allocating during a CUDA
  // graph capture). The buffer must outlive the runs.
  void use_stream(cudaStream_t stream, void* workspace, std::size_t workspace_bytes);

 private:
  cublasHandle_t handle_ = nullptr;
};

// Runs `shape` once on fresh random data and compares sampled entries (all of them for
// small outputs) with the CPU reference; throws HarnessFailure naming the shape and the worst
// entry when they differ by more than the dtype's tolerance.
void verify_gemm(const GemmRunner& runner, const GemmShape& shape);

}  // namespace servesim::validation
