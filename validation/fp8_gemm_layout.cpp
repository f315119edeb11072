#include "validation/fp8_gemm_layout.h"

#include <utility>

namespace servesim::validation {

Fp8LtOperands fp8_lt_operands(std::int64_t rows, std::int64_t n, std::int64_t k) {
  return Fp8LtOperands{{k, n, k}, {k, rows, k}, {n, rows, n}};
}

std::optional<std::string> fp8_lt_shape_problem(const GemmShape& shape) {
  for (const auto& [name, value] : {std::pair{"n", shape.n}, std::pair{"k", shape.k}}) {
    if (value % kFp8LtAlignmentElements != 0) {
      return shape.op + " has " + name + " = " + std::to_string(value) + ", not a multiple of " +
             std::to_string(kFp8LtAlignmentElements) +
             " (cuBLASLt's FP8 kernels need leading dimensions of multiples of 16 bytes)";
    }
  }
  return std::nullopt;
}

std::int64_t fp8_lt_padded_rows(std::int64_t m) noexcept {
  return (m + kFp8LtAlignmentElements - 1) / kFp8LtAlignmentElements * kFp8LtAlignmentElements;
}

}  // namespace servesim::validation
