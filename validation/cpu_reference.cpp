#include "validation/cpu_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace servesim::validation {

std::uint64_t next_random(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<std::uint16_t> random_elements(ElementType type, std::size_t count,
                                           std::uint64_t seed) {
  std::vector<std::uint16_t> values(count);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < count; ++i) {
    const auto top24 = static_cast<float>(next_random(state) >> 40);
    values[i] = float_to_bits(type, top24 * 0x1p-23f - 1.0f);
  }
  return values;
}

float reference_gemm_entry(ElementType type, std::span<const std::uint16_t> a,
                           std::span<const std::uint16_t> w, std::int64_t k, std::int64_t i,
                           std::int64_t j) {
  float sum = 0.0f;
  for (std::int64_t l = 0; l < k; ++l) {
    sum += bits_to_float(type, a[static_cast<std::size_t>(i * k + l)]) *
           bits_to_float(type, w[static_cast<std::size_t>(j * k + l)]);
  }
  return sum;
}

float reference_int4_gemm_entry(std::span<const std::uint16_t> a, const Int4Weights& w,
                                std::int64_t i, std::int64_t j) {
  float sum = 0.0f;
  for (std::int64_t l = 0; l < w.k; ++l) {
    sum += bits_to_float(w.scale_type, a[static_cast<std::size_t>(i * w.k + l)]) *
           dequantize_int4(w, j, l);
  }
  return sum;
}

float reference_fp8_gemm_entry(std::span<const std::uint8_t> a, std::span<const std::uint8_t> w,
                               std::int64_t k, float a_scale, float w_scale, std::int64_t i,
                               std::int64_t j) {
  float sum = 0.0f;
  for (std::int64_t l = 0; l < k; ++l) {
    sum += fp8_e4m3_to_float(a[static_cast<std::size_t>(i * k + l)]) *
           fp8_e4m3_to_float(w[static_cast<std::size_t>(j * k + l)]);
  }
  return sum * (a_scale * w_scale);
}

std::vector<float> reference_attention(ElementType type, const HeadShape& heads,
                                       std::span<const std::uint16_t> q, std::int64_t q_row_stride,
                                       std::int64_t query_index, const AttentionQuery& query,
                                       std::int64_t head, const KvLayout& layout,
                                       std::span<const std::uint16_t> k,
                                       std::span<const std::uint16_t> v) {
  const std::int64_t d = heads.head_dim;
  const std::int64_t kv_head = head / (heads.num_heads / heads.num_kv_heads);
  const std::int64_t row_elements = heads.num_kv_heads * d;
  const auto at = [type](std::span<const std::uint16_t> buffer, std::int64_t index) {
    return bits_to_float(type, buffer[static_cast<std::size_t>(index)]);
  };
  const std::int64_t q_base = query_index * q_row_stride + head * d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> scores(static_cast<std::size_t>(query.keys));
  for (std::int64_t t = 0; t < query.keys; ++t) {
    const std::int64_t k_base = layout.row(query.sequence, t) * row_elements + kv_head * d;
    float dot = 0.0f;
    for (std::int64_t e = 0; e < d; ++e)
      dot += at(q, q_base + e) * at(k, k_base + e);
    scores[static_cast<std::size_t>(t)] = dot * scale;
  }
  const float max_score = *std::max_element(scores.begin(), scores.end());
  float total = 0.0f;
  for (float& s : scores) {
    s = std::exp(s - max_score);
    total += s;
  }
  std::vector<float> out(static_cast<std::size_t>(d), 0.0f);
  for (std::int64_t t = 0; t < query.keys; ++t) {
    const std::int64_t v_base = layout.row(query.sequence, t) * row_elements + kv_head * d;
    const float weight = scores[static_cast<std::size_t>(t)] / total;
    for (std::int64_t e = 0; e < d; ++e)
      out[static_cast<std::size_t>(e)] += weight * at(v, v_base + e);
  }
  return out;
}

std::vector<float> reference_rms_norm(std::span<const float> row) {
  double square_sum = 0.0;
  for (const float x : row)
    square_sum += static_cast<double>(x) * x;
  const double mean = row.empty() ? 0.0 : square_sum / static_cast<double>(row.size());
  const auto inverse = static_cast<float>(1.0 / std::sqrt(mean + 1e-5));
  std::vector<float> out;
  for (const float x : row)
    out.push_back(x * inverse);
  return out;
}

float reference_silu_mul(float gate, float up) {
  return gate / (1.0f + std::exp(-gate)) * up;
}

std::vector<std::size_t> sampled_entries(std::size_t count, std::size_t samples) {
  std::vector<std::size_t> entries;
  if (count <= samples) {
    for (std::size_t i = 0; i < count; ++i)
      entries.push_back(i);
    return entries;
  }
  for (std::size_t i = 0; i < samples; ++i)
    entries.push_back(i * 7919 % count);
  entries.push_back(0);
  entries.push_back(count - 1);
  return entries;
}

ToleranceReport compare_to_reference(std::span<const float> expected, std::span<const float> actual,
                                     double rtol) {
  if (expected.size() != actual.size()) {
    throw std::invalid_argument("compare_to_reference: sizes differ");
  }
  double square_sum = 0.0;
  for (const float e : expected)
    square_sum += static_cast<double>(e) * e;
  const double rms =
      expected.empty() ? 0.0 : std::sqrt(square_sum / static_cast<double>(expected.size()));
  ToleranceReport report;
  report.checked = expected.size();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double e = expected[i];
    const double a = actual[i];
    const double allowed = rtol * (std::fabs(e) + rms);
    double ratio = std::fabs(a - e) / allowed;
    if (!std::isfinite(a)) ratio = std::numeric_limits<double>::infinity();
    if (std::isnan(ratio)) ratio = 0.0;  // 0 / 0: an exact zero where zero was expected
    if (ratio > report.worst_ratio) {
      report = {report.checked, i, ratio, e, a};
    }
  }
  return report;
}

std::string matrix_mismatch(const ToleranceReport& report, std::span<const std::size_t> entries,
                            std::size_t columns) {
  const std::size_t entry = entries[report.worst_index];
  return "verification failed at C[" + std::to_string(entry / columns) + "][" +
         std::to_string(entry % columns) + "]: expected " + std::to_string(report.expected) +
         ", got " + std::to_string(report.actual);
}

}  // namespace servesim::validation
