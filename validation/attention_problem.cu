#include "validation/attention_problem.cuh"

#include <algorithm>
#include <utility>

#include "validation/cpu_reference.h"

namespace servesim::validation {
namespace {

KvLayout make_layout(const std::vector<std::int64_t>& context_tokens, std::int64_t block_size,
                     std::uint64_t seed) {
  return block_size > 0 ? KvLayout::paged(context_tokens, block_size, seed)
                        : KvLayout::contiguous(context_tokens);
}

}  // namespace

AttentionProblem::AttentionProblem(ElementType dtype, const HeadShape& heads,
                                   std::vector<std::int64_t> context_tokens,
                                   std::vector<AttentionQuery> queries, std::int64_t block_size,
                                   std::uint64_t seed, bool rotate)
    : dtype_(dtype),
      heads_(heads),
      queries_(std::move(queries)),
      layout_(make_layout(context_tokens, block_size, seed)) {
  const std::int64_t row_elements = heads.num_kv_heads * heads.head_dim;
  const auto q_row = static_cast<std::size_t>(heads.num_heads * heads.head_dim);
  q_ = random_elements(dtype, queries_.size() * q_row, seed + 1);
  // Keys and values are drawn in sequence order and then laid out, so the paged and the
  // contiguous cache of the same seed hold the same numbers.
  const KvLayout logical = KvLayout::contiguous(context_tokens);
  const auto logical_count = static_cast<std::size_t>(logical.total_rows() * row_elements);
  k_ = relayout(random_elements(dtype, logical_count, seed + 2), logical, layout_, row_elements);
  v_ = relayout(random_elements(dtype, logical_count, seed + 3), logical, layout_, row_elements);
  kv_elements_ = k_.size();
  kv_sets_ = rotate ? rotation_sets(2 * 2 * kv_elements_) : 1;

  q_device_ = upload(q_);
  queries_device_ = upload(queries_);
  starts_device_ = upload(layout_.sequence_start_rows());
  table_device_ = upload(layout_.block_table());
  k_device_ = DeviceBuffer(kv_sets_ * kv_elements_ * 2);
  v_device_ = DeviceBuffer(kv_sets_ * kv_elements_ * 2);
  for (std::size_t set = 0; set < kv_sets_; ++set) {
    check(cudaMemcpy(k_device_.data() + set * kv_elements_ * 2, k_.data(), kv_elements_ * 2,
                     cudaMemcpyHostToDevice),
          "cudaMemcpy to device");
    check(cudaMemcpy(v_device_.data() + set * kv_elements_ * 2, v_.data(), kv_elements_ * 2,
                     cudaMemcpyHostToDevice),
          "cudaMemcpy to device");
  }
  out_device_ = DeviceBuffer(queries_.size() * q_row * 2);
}

AttentionArgs AttentionProblem::args_for(std::size_t set) const {
  AttentionArgs args;
  args.dtype = dtype_;
  args.heads = heads_;
  args.q = q_device_.data();
  args.q_row_stride = heads_.num_heads * heads_.head_dim;
  args.queries = queries_device_.as<AttentionQuery>();
  args.num_queries = static_cast<std::int64_t>(queries_.size());
  args.k = k_device_.data() + set * kv_elements_ * 2;
  args.v = v_device_.data() + set * kv_elements_ * 2;
  args.kv.block_size = layout_.block_size();
  args.kv.sequence_start_rows = starts_device_.as<std::int64_t>();
  args.kv.block_table = table_device_.as<std::int32_t>();
  args.kv.max_blocks_per_sequence = layout_.max_blocks_per_sequence();
  args.out = out_device_.data();
  return args;
}

void AttentionProblem::launch(std::size_t call) const {
  launch_attention(args_for(call % kv_sets_));
}

void AttentionProblem::verify(const std::string& what) const {
  const std::size_t out_count = out_device_.size_bytes() / 2;
  check(cudaMemset(out_device_.data(), 0xFF, out_count * 2), "cudaMemset");  // NaN until written
  launch_attention(args_for(0));
  check(cudaDeviceSynchronize(), "attention kernel");
  const auto out = download<std::uint16_t>(out_device_.data(), out_count);

  constexpr std::size_t kSamples = 64;
  const std::size_t pairs = queries_.size() * static_cast<std::size_t>(heads_.num_heads);
  const std::size_t samples = std::min(kSamples, pairs);
  const auto d = static_cast<std::size_t>(heads_.head_dim);
  std::vector<float> expected;
  std::vector<float> actual;
  std::vector<std::size_t> sampled;
  for (std::size_t i = 0; i < samples; ++i) {
    // Spread over all (query, head) pairs, the last one included.
    const std::size_t pair = samples == 1 ? 0 : i * (pairs - 1) / (samples - 1);
    const std::size_t query = pair / static_cast<std::size_t>(heads_.num_heads);
    const auto head = static_cast<std::int64_t>(pair % static_cast<std::size_t>(heads_.num_heads));
    const auto reference = reference_attention(
        dtype_, heads_, q_, heads_.num_heads * heads_.head_dim, static_cast<std::int64_t>(query),
        queries_[query], head, layout_, k_, v_);
    for (std::size_t e = 0; e < d; ++e) {
      expected.push_back(reference[e]);
      actual.push_back(bits_to_float(dtype_, out[pair * d + e]));
      sampled.push_back(pair);
    }
  }
  const ToleranceReport report = compare_to_reference(expected, actual, relative_tolerance(dtype_));
  if (!report.passed()) {
    const std::size_t pair = sampled[report.worst_index];
    throw HarnessFailure(
        what + ": verification failed for query " +
        std::to_string(pair / static_cast<std::size_t>(heads_.num_heads)) + " head " +
        std::to_string(pair % static_cast<std::size_t>(heads_.num_heads)) + ": expected " +
        std::to_string(report.expected) + ", got " + std::to_string(report.actual));
  }
}

}  // namespace servesim::validation
