#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "validation/attention_batch.h"
#include "validation/half_precision.h"
#include "validation/kv_layout.h"
#include "validation/quantized_formats.h"
#include "validation/shapes.h"

namespace servesim::validation {

// CPU references for the device kernels, computed in fp32 from the same 16-bit inputs
// (raw bits, see half_precision.h). They are slow and simple on purpose: checking a sample
// of outputs of a large kernel costs a few dot products each.

// splitmix64: the harness's one source of random data (fills, routing), fast and good enough
// to make every element of every buffer differ. Advances `state`.
std::uint64_t next_random(std::uint64_t& state) noexcept;

// Row-major fills of `count` values uniform in [-1, 1), rounded to `type`.
std::vector<std::uint16_t> random_elements(ElementType type, std::size_t count, std::uint64_t seed);

// Entry (i, j) of C = A . W^T with A [m x k] and W [n x k], both row-major.
float reference_gemm_entry(ElementType type, std::span<const std::uint16_t> a,
                           std::span<const std::uint16_t> w, std::int64_t k, std::int64_t i,
                           std::int64_t j);

// Entry (i, j) of C = A . dequant(W)^T: 16-bit activations A [m x k] (of weights.scale_type)
// against int4 weights W [n x k] with per-group scales (quantized_formats.h).
float reference_int4_gemm_entry(std::span<const std::uint16_t> a, const Int4Weights& w,
                                std::int64_t i, std::int64_t j);

// Entry (i, j) of C = (a_scale A) . (w_scale W)^T with A [m x k] and W [n x k] in fp8 e4m3, the
// per-tensor scales applied once to the fp32 sum, as FP8 GEMMs with per-tensor scales do.
float reference_fp8_gemm_entry(std::span<const std::uint8_t> a, std::span<const std::uint8_t> w,
                               std::int64_t k, float a_scale, float w_scale, std::int64_t i,
                               std::int64_t j);

// The output of head `head` for query `query_index`: softmax(q . K^T / sqrt(head_dim)) . V over
// the first query.keys tokens of its sequence. q is [queries x q_row_stride] with head h at
// h x head_dim; K and V are buffers of `layout` with rows of num_kv_heads x head_dim; query
// head h reads KV head h / (num_heads / num_kv_heads).
std::vector<float> reference_attention(ElementType type, const HeadShape& heads,
                                       std::span<const std::uint16_t> q, std::int64_t q_row_stride,
                                       std::int64_t query_index, const AttentionQuery& query,
                                       std::int64_t head, const KvLayout& layout,
                                       std::span<const std::uint16_t> k,
                                       std::span<const std::uint16_t> v);

// RMS normalisation without a learned scale: x / sqrt(mean(x^2) + 1e-5).
std::vector<float> reference_rms_norm(std::span<const float> row);

// The gated MLP activation of Llama-style models: SiLU(gate) x up.
float reference_silu_mul(float gate, float up);

// The output entries a verification checks, of `count`: all of them up to `samples`, otherwise
// `samples` entries spread over the output (stride 7919, a prime) plus the first and the last.
std::vector<std::size_t> sampled_entries(std::size_t count, std::size_t samples = 2048);

// The worst element of `actual` against `expected`: its error over the allowed
// rtol x (|expected| + rms(expected)). The rms term keeps entries near zero, where a sum
// cancels, from failing on rounding noise. Passes when the worst ratio is at most 1; a NaN
// or infinity in `actual` always fails.
struct ToleranceReport {
  std::size_t checked = 0;
  std::size_t worst_index = 0;
  double worst_ratio = 0.0;
  double expected = 0.0;
  double actual = 0.0;
  bool passed() const noexcept { return worst_ratio <= 1.0; }
};
ToleranceReport compare_to_reference(std::span<const float> expected, std::span<const float> actual,
                                     double rtol);

// "verification failed at C[row][col]: expected X, got Y" for a failed report over the sampled
// `entries` of a row-major output with `columns` columns.
std::string matrix_mismatch(const ToleranceReport& report, std::span<const std::size_t> entries,
                            std::size_t columns);

}  // namespace servesim::validation
