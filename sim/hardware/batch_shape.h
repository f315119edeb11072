#pragma once

#include <algorithm>
#include <cstdint>

namespace servesim {

// The key spans of a model's windowed attention layers, on which the work of a prompt chunk in
// those layers depends: a sliding window of `window_tokens` keys per query (the query's own
// position and the W - 1 before it), and chunked-local attention within aligned chunks of
// `chunk_tokens` positions (Llama 4). 0: the model has no such layers. The cost model says
// which spans it prices (IExecutionTimeModel::attention_spans); a shape built without them
// prices windowed layers over the whole context, as a full layer (conservative).
struct AttentionSpans {
  std::int64_t window_tokens = 0;
  std::int64_t chunk_tokens = 0;
  bool operator==(const AttentionSpans&) const = default;
};

// One windowed layer kind's prompt-chunk sums (see BatchShape::add_prefill).
struct WindowedPrefill {
  double pairs = 0;         // query-key pairs the layer's mask keeps
  double context_keys = 0;  // keys each chunk reads (the cache positions its queries reach)
  // Pairs of the rectangle of (chunk queries x keys read) the mask hides: the work of a kernel
  // that does not skip masked tiles (for a full layer this is the causal triangle c (c - 1) / 2).
  double masked_pairs = 0;
};

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
  // The spans the windowed sums below are kept for (set before adding chunks), and the sums:
  // exactly zero when the span is 0.
  AttentionSpans spans;
  WindowedPrefill prefill_window;   // a sliding-window layer of spans.window_tokens
  WindowedPrefill prefill_chunked;  // a chunked-local layer of spans.chunk_tokens

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
    if (spans.window_tokens > 0) add_window(chunk_tokens, cached_tokens);
    if (spans.chunk_tokens > 0) add_chunked(chunk_tokens, cached_tokens);
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

 private:
  // The queries at positions p .. p + c - 1 of a sliding-window layer of W keys: position i
  // attends to min(i + 1, W) keys. The first r = clamp(W - p, 0, c) queries see their whole
  // prefix (r p + r (r + 1) / 2 pairs), the rest W each; the chunk reads the keys from
  // max(0, p - W + 1) to p + c - 1.
  void add_window(std::int64_t chunk_tokens, std::int64_t cached_tokens) noexcept {
    const double c = static_cast<double>(chunk_tokens);
    const double p = static_cast<double>(cached_tokens);
    const double w = static_cast<double>(spans.window_tokens);
    const double r = std::clamp(w - p, 0.0, c);
    const double pairs = r * p + r * (r + 1) / 2 + (c - r) * w;
    const double keys = std::min(p + c, c + w - 1);
    prefill_window.pairs += pairs;
    prefill_window.context_keys += keys;
    prefill_window.masked_pairs += c * keys - pairs;
  }
  // The queries at positions p .. p + c - 1 of a chunked-local layer of chunks of C positions:
  // position i attends to the (i mod C) + 1 keys of its own chunk so far. The prompt chunk is
  // cut at the multiples of C into segments, each a causal block of its own (as the kernels
  // run local attention: one virtual sequence per chunk): a segment of n queries after the m
  // positions of its chunk already cached has n m + n (n + 1) / 2 pairs, reads m + n keys and
  // hides n (n - 1) / 2 pairs. A prompt chunk has a first segment, whole chunks, and a last one.
  void add_chunked(std::int64_t chunk_tokens, std::int64_t cached_tokens) noexcept {
    if (chunk_tokens <= 0) return;
    const std::int64_t size = spans.chunk_tokens;
    const auto segment = [this](double n, double m) {
      prefill_chunked.pairs += n * m + n * (n + 1) / 2;
      prefill_chunked.context_keys += m + n;
      prefill_chunked.masked_pairs += n * (n - 1) / 2;
    };
    const std::int64_t start = cached_tokens % size;  // positions of the first chunk cached
    const std::int64_t first = std::min(chunk_tokens, size - start);
    segment(static_cast<double>(first), static_cast<double>(start));
    const std::int64_t rest = chunk_tokens - first;
    const std::int64_t whole = rest / size;
    if (whole > 0) {
      const double n = static_cast<double>(size);
      const double k = static_cast<double>(whole);
      prefill_chunked.pairs += k * n * (n + 1) / 2;
      prefill_chunked.context_keys += k * n;
      prefill_chunked.masked_pairs += k * n * (n - 1) / 2;
    }
    if (rest % size > 0) segment(static_cast<double>(rest % size), 0);
  }
};

}  // namespace servesim
