#include "sim/hardware/data_parallel.h"

namespace servesim {
namespace {

// ceil(value x part / whole) in integers: exact, where the product in doubles may round up
// past a whole number.
std::int64_t share_of(std::int64_t value, std::int64_t part, std::int64_t whole) noexcept {
  return (value * part + whole - 1) / whole;
}

void scale(WindowedPrefill& sums, double f) noexcept {
  sums.pairs *= f;
  sums.context_keys *= f;
  sums.masked_pairs *= f;
}

}  // namespace

BatchShape busiest_attention_rank(const BatchShape& replica, std::int64_t ranks) noexcept {
  if (ranks <= 1) return replica;
  BatchShape r;
  r.spans = replica.spans;
  const auto busiest = [ranks](std::int64_t n) { return (n + ranks - 1) / ranks; };
  std::int64_t sampled_prefills = replica.sampled_sequences - replica.decode_sequences;
  if (replica.prefill_sequences > 0) {
    const std::int64_t n = replica.prefill_sequences;
    const std::int64_t k = busiest(n);
    const double f = static_cast<double>(k) / static_cast<double>(n);
    r.prefill_sequences = k;
    r.prefill_tokens = share_of(replica.prefill_tokens, k, n);
    r.prefill_context_tokens = share_of(replica.prefill_context_tokens, k, n);
    r.prefill_attention_pairs = replica.prefill_attention_pairs * f;
    r.prefill_masked_pairs = replica.prefill_masked_pairs * f;
    r.prefill_window = replica.prefill_window;
    scale(r.prefill_window, f);
    r.prefill_chunked = replica.prefill_chunked;
    scale(r.prefill_chunked, f);
    sampled_prefills = share_of(sampled_prefills, k, n);
  }
  if (replica.decode_sequences > 0) {
    const std::int64_t m = replica.decode_sequences;
    const std::int64_t k = busiest(m);
    r.decode_sequences = k;
    r.decode_context_tokens = share_of(replica.decode_context_tokens, k, m);
  }
  r.sampled_sequences = r.decode_sequences + sampled_prefills;
  return r;
}

}  // namespace servesim
