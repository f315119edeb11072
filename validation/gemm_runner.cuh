#pragma once

#include <cublas_v2.h>

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

  // Device pointers; enqueued on the default stream. Throws HarnessFailure on a cuBLAS error.
  void run(const GemmShape& shape, const void* a, const void* w, void* c) const;

 private:
  cublasHandle_t handle_ = nullptr;
};

// Runs `shape` once on fresh random data and compares sampled entries (all of them for
// small outputs) with the CPU reference; throws HarnessFailure naming the shape and the worst
// entry when they differ by more than the dtype's tolerance.
void verify_gemm(const GemmRunner& runner, const GemmShape& shape);

}  // namespace servesim::validation
