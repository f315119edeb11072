#include "validation/fp8_gemm_runner.cuh"

#include <cstdint>
#include <string>
#include <vector>

#include "validation/cpu_reference.h"
#include "validation/device_support.cuh"
#include "validation/fp8_gemm_layout.h"
#include "validation/quantized_formats.h"

namespace servesim::validation {
namespace {

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw HarnessFailure(std::string(what) + ": " + cublasLtGetStatusString(status));
  }
}

cudaDataType output_type(ElementType type) {
  return type == ElementType::FP16 ? CUDA_R_16F : CUDA_R_16BF;
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value,
              const char* what) {
  check_lt(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)), what);
}

cublasLtMatrixLayout_t make_layout(cudaDataType type, const ColumnMajorMatrix& matrix) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_lt(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(matrix.rows),
                                      static_cast<std::uint64_t>(matrix.cols), matrix.ld),
           "cublasLtMatrixLayoutCreate");
  return layout;
}

template <typename T>
T algo_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  check_lt(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value), &written),
           "cublasLtMatmulAlgoConfigGetAttribute");
  return value;
}

}  // namespace

LtHandle::LtHandle() {
  check_lt(cublasLtCreate(&handle_), "cublasLtCreate");
}

LtHandle::~LtHandle() {
  cublasLtDestroy(handle_);
}

Fp8Matmul::Fp8Matmul(cublasLtHandle_t handle, const GemmShape& shape, const float* activation_scale,
                     const float* weight_scale, std::size_t workspace_bytes)
    : handle_(handle), shape_(shape), workspace_bytes_(workspace_bytes) {
  try {
    check_lt(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
             "cublasLtMatmulDescCreate");
    // The "TN" layout (fp8_gemm_layout.h): cuBLASLt's A is the weights, transposed; B the
    // activations. Each scale goes with its operand.
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, "TRANSA");
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, "TRANSB");
    set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(weight_scale),
             "A_SCALE_POINTER");
    set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
             static_cast<const void*>(activation_scale), "B_SCALE_POINTER");
    const std::int64_t padded = fp8_lt_padded_rows(shape.m);
    if (!choose_algorithm(shape.m) && !(padded != shape.m && choose_algorithm(padded))) {
      throw HarnessFailure(describe_fp8_gemm(shape) +
                           ": cuBLASLt offers no FP8 algorithm for this shape (rows tried: " +
                           std::to_string(shape.m) +
                           (padded != shape.m ? " and " + std::to_string(padded) : "") + ")");
    }
  } catch (...) {
    release();
    throw;
  }
}

Fp8Matmul::~Fp8Matmul() {
  release();
}

bool Fp8Matmul::choose_algorithm(std::int64_t rows) {
  for (cublasLtMatrixLayout_t layout : {weights_, activations_, output_}) {
    if (layout != nullptr) cublasLtMatrixLayoutDestroy(layout);
  }
  weights_ = activations_ = output_ = nullptr;
  const Fp8LtOperands operands = fp8_lt_operands(rows, shape_.n, shape_.k);
  weights_ = make_layout(CUDA_R_8F_E4M3, operands.weights);
  activations_ = make_layout(CUDA_R_8F_E4M3, operands.activations);
  output_ = make_layout(output_type(shape_.dtype), operands.output);

  cublasLtMatmulPreference_t preference = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t max_workspace = workspace_bytes_;
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof(max_workspace));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS) {
    status = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, weights_, activations_, output_,
                                            output_, preference, 1, &result, &found);
  }
  cublasLtMatmulPreferenceDestroy(preference);
  // NOT_SUPPORTED: no heuristic for this configuration, which is an answer, not a failure.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  check_lt(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS) return false;
  algo_ = result.algo;
  rows_ = rows;
  choice_.algo_id = algo_config<std::int32_t>(algo_, CUBLASLT_ALGO_CONFIG_ID);
  choice_.tile_id = algo_config<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID);
  choice_.stages_id = algo_config<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  choice_.split_k = algo_config<std::int32_t>(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  choice_.workspace_bytes = result.workspaceSize;
  choice_.waves = result.wavesCount;
  return true;
}

void Fp8Matmul::release() noexcept {
  for (cublasLtMatrixLayout_t layout : {weights_, activations_, output_}) {
    if (layout != nullptr) cublasLtMatrixLayoutDestroy(layout);
  }
  weights_ = activations_ = output_ = nullptr;
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  desc_ = nullptr;
}

void Fp8Matmul::run(const void* a, const void* w, void* c, void* workspace,
                    cudaStream_t stream) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // C is D (beta 0: it is not read).
  check_lt(cublasLtMatmul(handle_, desc_, &alpha, w, weights_, a, activations_, &beta, c, output_,
                          c, output_, &algo_, workspace, workspace_bytes_, stream),
           "cublasLtMatmul");
}

std::string describe_fp8_gemm(const GemmShape& s) {
  return "gemm fp8 " + s.op + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + " (" + std::string(element_type_name(s.dtype)) + " output)";
}

std::string describe_choice(const GemmShape& shape, const Fp8Matmul& matmul) {
  const LtAlgoChoice& c = matmul.choice();
  std::string line = describe_fp8_gemm(shape) + ": cuBLASLt algo " + std::to_string(c.algo_id) +
                     ", tile id " + std::to_string(c.tile_id) + ", stages id " +
                     std::to_string(c.stages_id) + ", split-k " + std::to_string(c.split_k) +
                     ", workspace " + std::to_string(c.workspace_bytes) + " bytes, waves " +
                     std::to_string(c.waves);
  if (matmul.rows() != shape.m) {
    line += "; no algorithm for " + std::to_string(shape.m) + " rows, so " +
            std::to_string(matmul.rows()) + " rows are computed and recorded as m";
  }
  return line;
}

void verify_fp8_gemm(const Fp8Matmul& matmul, const GemmShape& shape, void* workspace) {
  const auto rows = static_cast<std::size_t>(matmul.rows());
  const auto n = static_cast<std::size_t>(shape.n);
  const auto k = static_cast<std::size_t>(shape.k);
  DeviceBuffer a(rows * k);
  DeviceBuffer w(n * k);
  DeviceBuffer c(rows * n * 2);
  fill_random_bytes(a.data(), a.size_bytes(), 0xF8A11CEull + rows, kFp8FiniteMask);
  fill_random_bytes(w.data(), w.size_bytes(), 0xF8B0Bull + n, kFp8FiniteMask);
  check(cudaMemset(c.data(), 0xFF, c.size_bytes()), "cudaMemset");  // NaN until written
  matmul.run(a.data(), w.data(), c.data(), workspace, nullptr);
  check(cudaDeviceSynchronize(), "fp8 gemm");
  const auto a_host = download<std::uint8_t>(a.data(), rows * k);
  const auto w_host = download<std::uint8_t>(w.data(), n * k);
  const auto c_host = download<std::uint16_t>(c.data(), rows * n);

  const std::vector<std::size_t> entries = sampled_entries(rows * n);
  std::vector<float> expected;
  std::vector<float> actual;
  for (const std::size_t entry : entries) {
    expected.push_back(reference_fp8_gemm_entry(
        a_host, w_host, shape.k, kFp8TestActivationScale, kFp8TestWeightScale,
        static_cast<std::int64_t>(entry / n), static_cast<std::int64_t>(entry % n)));
    actual.push_back(bits_to_float(shape.dtype, c_host[entry]));
  }
  const ToleranceReport report =
      compare_to_reference(expected, actual, relative_tolerance(shape.dtype));
  if (!report.passed()) {
    throw HarnessFailure(describe_fp8_gemm(shape) + ": " + matrix_mismatch(report, entries, n));
  }
}

}  // namespace servesim::validation
