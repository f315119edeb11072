#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "validation/shapes.h"

namespace servesim::validation {

// How `gemm --dtype fp8` hands the serving layout C[m x n] = A[m x k] . W[n x k]^T, every
// buffer row-major, to cuBLASLt, whose matrices are column-major: a row-major [r x c] buffer is
// the column-major c x r matrix with leading dimension c, so cuBLASLt computes C^T = W . A^T,
// its (M, N, K) being (n, m, k). This is also the only layout its FP8 kernels take on Hopper,
// "TN": cuBLASLt's A transposed, its B not.
//   A (weights):     W read as k x n, leading dimension k, CUBLASLT_MATMUL_DESC_TRANSA = T, so
//                    op(A) = W [n x k]; CUBLASLT_MATMUL_DESC_A_SCALE_POINTER is W's scale;
//   B (activations): A read as k x m, leading dimension k, TRANSB = N;
//                    CUBLASLT_MATMUL_DESC_B_SCALE_POINTER is A's scale;
//   C and D:         C read as n x m, leading dimension n, in the 16-bit output format.
struct ColumnMajorMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  // elements from one column to the next
};

struct Fp8LtOperands {
  ColumnMajorMatrix weights;      // cuBLASLt's A, transposed
  ColumnMajorMatrix activations;  // cuBLASLt's B
  ColumnMajorMatrix output;       // cuBLASLt's C and D
};

// The operands of a GEMM over `rows` token rows of A against W [n x k].
Fp8LtOperands fp8_lt_operands(std::int64_t rows, std::int64_t n, std::int64_t k);

// cuBLASLt's FP8 kernels need operands aligned to 16 bytes: leading dimensions of multiples of 16
// one-byte elements. In the serving layout those are k (A and W) and n (the output, 2 bytes an
// element), so n and k must be multiples of 16; m, the columns of B and D, need not be.
inline constexpr std::int64_t kFp8LtAlignmentElements = 16;

// What keeps `shape` from running as a cuBLASLt FP8 GEMM ("qkv has n = 1000, not a multiple of
// 16"), or nothing when it can.
std::optional<std::string> fp8_lt_shape_problem(const GemmShape& shape);

// The rows tried when cuBLASLt offers no FP8 algorithm for m token rows: m rounded up to a
// multiple of 16 (the extra rows are computed and timed; the record's m says so).
std::int64_t fp8_lt_padded_rows(std::int64_t m) noexcept;

}  // namespace servesim::validation
