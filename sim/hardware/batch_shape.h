#pragma once

#include <cstdint>

namespace servesim {

// What one iteration of one replica computes, reduced to the sums the cost model needs, so
// that pricing an iteration costs O(1) whatever the batch size. The simulator keeps these
// sums incrementally; add_prefill/add_decode build them one sequence at a time.
struct BatchShape {
  std::int64_t prefill_sequences = 0;       // sequences with a prompt chunk in this iteration
  std::int64_t prefill_tokens = 0;          // sum of the chunk lengths
  std::int64_t prefill_context_tokens = 0;  // sum of (cached + chunk): keys each chunk reads
  // Sum over chunks of query-key pairs under the causal mask: c * p + c (c + 1) / 2 for a
  // chunk of c tokens after p cached ones. Attention FLOPs are proportional to it.
  double prefill_attention_pairs = 0;
  // Sum over chunks of c (c - 1) / 2: the pairs above the causal diagonal of each chunk, work
  // that an attention kernel which does not skip masked tiles still does.
  double prefill_masked_pairs = 0;
  std::int64_t decode_sequences = 0;       // sequences generating one token each
  std::int64_t decode_context_tokens = 0;  // sum of their context lengths, new token included
  std::int64_t sampled_sequences = 0;      // sequences whose logits are computed

  // A chunk of `chunk_tokens` prompt tokens after `cached_tokens` already in the KV cache;
  // `completes_prompt` when the chunk ends the prompt, so the sequence samples a token.
  void add_prefill(std::int64_t chunk_tokens, std::int64_t cached_tokens,
                   bool completes_prompt = true) noexcept {
    const double c = static_cast<double>(chunk_tokens);
    prefill_sequences += 1;
    prefill_tokens += chunk_tokens;
    prefill_context_tokens += cached_tokens + chunk_tokens;
    prefill_attention_pairs += c * static_cast<double>(cached_tokens) + c * (c + 1) / 2;
    prefill_masked_pairs += c * (c - 1) / 2;
    if (completes_prompt) sampled_sequences += 1;
  }

  // A decoding sequence whose context, including the token it feeds, is `context_tokens`.
  void add_decode(std::int64_t context_tokens) noexcept { add_decodes(1, context_tokens); }
  // `sequences` decodes whose contexts sum to `context_tokens`.
  void add_decodes(std::int64_t sequences, std::int64_t context_tokens) noexcept {
    decode_sequences += sequences;
    decode_context_tokens += context_tokens;
    sampled_sequences += sequences;
  }

  std::int64_t tokens() const noexcept { return prefill_tokens + decode_sequences; }
  std::int64_t sequences() const noexcept { return prefill_sequences + decode_sequences; }
  bool empty() const noexcept { return tokens() == 0; }
};

}  // namespace servesim
