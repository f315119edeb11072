#include "validation/gemm_runner.cuh"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "validation/cpu_reference.h"
#include "validation/device_support.cuh"

namespace servesim::validation {
namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw HarnessFailure(std::string(what) + ": " + cublasGetStatusString(status));
  }
}

std::string describe(const GemmShape& s) {
  return "gemm " + s.op + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + " " + std::string(element_type_name(s.dtype));
}

}  // namespace

GemmRunner::GemmRunner() {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
}

GemmRunner::~GemmRunner() {
  cublasDestroy(handle_);
}

void GemmRunner::run(const GemmShape& shape, const void* a, const void* w, void* c) const {
  const cudaDataType type = shape.dtype == ElementType::FP16 ? CUDA_R_16F : CUDA_R_16BF;
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const int m = static_cast<int>(shape.m);
  const int n = static_cast<int>(shape.n);
  const int k = static_cast<int>(shape.k);
  // Column-major view of the row-major product: C^T [n x m] = W [n x k] . A^T [k x m],
  // i.e. op(W^T stored k x n) = transpose, A^T stored k x m as is.
  check_cublas(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, w, type, k, a, type,
                            k, &beta, c, type, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

void GemmRunner::use_stream(cudaStream_t stream, void* workspace, std::size_t workspace_bytes) {
  check_cublas(cublasSetStream(handle_, stream), "cublasSetStream");
  check_cublas(cublasSetWorkspace(handle_, workspace, workspace_bytes), "cublasSetWorkspace");
}

void verify_gemm(const GemmRunner& runner, const GemmShape& shape) {
  const auto a_count = static_cast<std::size_t>(shape.m * shape.k);
  const auto w_count = static_cast<std::size_t>(shape.n * shape.k);
  const auto c_count = static_cast<std::size_t>(shape.m * shape.n);
  DeviceBuffer a(a_count * 2);
  DeviceBuffer w(w_count * 2);
  DeviceBuffer c(c_count * 2);
  fill_random(a.data(), a_count, shape.dtype, 0xA11CEull + static_cast<std::uint64_t>(shape.m));
  fill_random(w.data(), w_count, shape.dtype, 0xB0Bull + static_cast<std::uint64_t>(shape.n));
  check(cudaMemset(c.data(), 0xFF, c_count * 2), "cudaMemset");  // NaN until written
  runner.run(shape, a.data(), w.data(), c.data());
  check(cudaDeviceSynchronize(), "gemm");
  const auto a_host = download<std::uint16_t>(a.data(), a_count);
  const auto w_host = download<std::uint16_t>(w.data(), w_count);
  const auto c_host = download<std::uint16_t>(c.data(), c_count);

  const std::vector<std::size_t> entries = sampled_entries(c_count);
  std::vector<float> expected;
  std::vector<float> actual;
  for (const std::size_t entry : entries) {
    const auto row = static_cast<std::int64_t>(entry) / shape.n;
    const auto col = static_cast<std::int64_t>(entry) % shape.n;
    expected.push_back(reference_gemm_entry(shape.dtype, a_host, w_host, shape.k, row, col));
    actual.push_back(bits_to_float(shape.dtype, c_host[entry]));
  }
  const ToleranceReport report =
      compare_to_reference(expected, actual, relative_tolerance(shape.dtype));
  if (!report.passed()) {
    throw HarnessFailure(describe(shape) + ": " +
                         matrix_mismatch(report, entries, static_cast<std::size_t>(shape.n)));
  }
}

}  // namespace servesim::validation
