#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "sim/hardware/batch_shape.h"
#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::shipped_hardware;
using test::shipped_model;

namespace {

// The windowed sums of one prompt chunk counted query by query and key by key.
WindowedPrefill brute_window(std::int64_t chunk, std::int64_t cached, std::int64_t window) {
  WindowedPrefill w;
  std::int64_t first_key = cached + chunk, last_key = 0;
  for (std::int64_t i = cached; i < cached + chunk; ++i) {
    const std::int64_t from = std::max<std::int64_t>(0, i - window + 1);
    w.pairs += static_cast<double>(i - from + 1);
    first_key = std::min(first_key, from);
    last_key = std::max(last_key, i);
  }
  w.context_keys = static_cast<double>(last_key - first_key + 1);
  w.masked_pairs = static_cast<double>(chunk) * w.context_keys - w.pairs;
  return w;
}

// Chunked-local attention: each attention chunk the prompt chunk touches is a causal block.
WindowedPrefill brute_chunked(std::int64_t chunk, std::int64_t cached, std::int64_t size) {
  WindowedPrefill w;
  for (std::int64_t block = cached / size; block * size < cached + chunk; ++block) {
    const std::int64_t start = block * size;
    double n = 0, pairs = 0;
    std::int64_t last = start;
    for (std::int64_t i = std::max(cached, start); i < std::min(cached + chunk, start + size);
         ++i) {
      n += 1;
      pairs += static_cast<double>(i - start + 1);
      last = i;
    }
    const double keys = static_cast<double>(last - start + 1);
    w.pairs += pairs;
    w.context_keys += keys;
    w.masked_pairs += n * keys - pairs;
  }
  return w;
}

BatchShape prefill(std::int64_t chunk, std::int64_t cached, AttentionSpans spans) {
  BatchShape shape;
  shape.spans = spans;
  shape.add_prefill(chunk, cached);
  return shape;
}

double full_pairs(double chunk, double cached) {
  return chunk * cached + chunk * (chunk + 1) / 2;
}

OperatorCost prefill_attention(const RooflineModel& model, const BatchShape& shape) {
  return model.estimate(shape).at(OperatorKind::AttentionPrefill);
}

}  // namespace

TEST_CASE("a sliding window's prompt sums are the count of min(position + 1, W) per query",
          "[hardware][window]") {
  for (std::int64_t window = 1; window <= 9; ++window) {
    for (std::int64_t cached = 0; cached <= 20; ++cached) {
      for (std::int64_t chunk = 1; chunk <= 20; ++chunk) {
        const WindowedPrefill sums = prefill(chunk, cached, {window, 0}).prefill_window;
        const WindowedPrefill hand = brute_window(chunk, cached, window);
        INFO("W " << window << ", chunk " << chunk << " after " << cached);
        REQUIRE(sums.pairs == hand.pairs);
        REQUIRE(sums.context_keys == hand.context_keys);
        REQUIRE(sums.masked_pairs == hand.masked_pairs);
      }
    }
  }
  // A window wider than the context changes nothing: the full layer's sums.
  const BatchShape wide = prefill(100, 28, {4096, 0});
  CHECK(wide.prefill_window.pairs == wide.prefill_attention_pairs);
  CHECK(wide.prefill_window.context_keys == static_cast<double>(wide.prefill_context_tokens));
  CHECK(wide.prefill_window.masked_pairs == wide.prefill_masked_pairs);
}

TEST_CASE("a chunked-local layer's prompt sums count each attention chunk as its own causal block",
          "[hardware][window]") {
  for (std::int64_t size = 1; size <= 9; ++size) {
    for (std::int64_t cached = 0; cached <= 30; ++cached) {
      for (std::int64_t chunk = 1; chunk <= 30; ++chunk) {
        const WindowedPrefill sums = prefill(chunk, cached, {0, size}).prefill_chunked;
        const WindowedPrefill hand = brute_chunked(chunk, cached, size);
        INFO("C " << size << ", chunk " << chunk << " after " << cached);
        REQUIRE(sums.pairs == hand.pairs);
        REQUIRE(sums.context_keys == hand.context_keys);
        REQUIRE(sums.masked_pairs == hand.masked_pairs);
      }
    }
  }
  // Without spans nothing is kept.
  const BatchShape plain = prefill(64, 8, {});
  CHECK(plain.prefill_window.pairs == 0);
  CHECK(plain.prefill_chunked.context_keys == 0);
}

TEST_CASE("Mistral-7B prices an 8k prompt's attention over its 4,096-token window",
          "[hardware][window]") {
  const RooflineModel model(shipped_model("mistral-7b"), shipped_hardware("h100-sxm"), {});
  REQUIRE(model.attention_spans() == AttentionSpans{4096, 0});
  // Positions 0..4095 see 1..4096 keys, the 4,096 after them 4,096 each.
  const double pairs = 4096.0 * 4097 / 2 + 4096.0 * 4096;
  const OperatorCost op = prefill_attention(model, prefill(8192, 0, model.attention_spans()));
  // 32 layers x 4 FLOPs per pair and query dimension (32 heads x 128).
  CHECK(op.flops == 32 * 4 * 4096.0 * pairs);
  // The keys read: a chunk of 512 after 8,000 cached reads its 512 and the 4,095 before.
  const double q = 4096, kv = 8 * 128;  // query and KV widths
  const double bytes = 512 * 2 * q * 2 + (512 + 4095) * 2 * kv * 2 + 512 * 2 * kv * 2;
  CHECK(prefill_attention(model, prefill(512, 8000, model.attention_spans())).bytes ==
        Approx(32 * bytes).epsilon(1e-12));
}

TEST_CASE("gpt-oss prices its sliding layers over 128 keys and its full layers over the context",
          "[hardware][window]") {
  const RooflineModel model(shipped_model("gpt-oss-120b"), shipped_hardware("h100-sxm"), {});
  REQUIRE(model.attention_spans() == AttentionSpans{128, 0});
  const double window_pairs = 128.0 * 129 / 2 + (8192.0 - 128) * 128;
  const double q = 64 * 64, kv = 8 * 64;
  const OperatorCost op = prefill_attention(model, prefill(8192, 0, model.attention_spans()));
  CHECK(op.flops == 18 * 4 * q * full_pairs(8192, 0) + 18 * 4 * q * window_pairs);
  // A chunk of 1,024 after 7,168 cached: the sliding layers read 1,024 + 127 keys.
  const double io = 1024 * 2 * q * 2 + 1024 * 2 * kv * 2;
  const double full_bytes = io + 8192 * 2 * kv * 2;
  const double window_bytes = io + (1024 + 127) * 2 * kv * 2;
  CHECK(prefill_attention(model, prefill(1024, 7168, model.attention_spans())).bytes ==
        Approx(18 * full_bytes + 18 * window_bytes).epsilon(1e-12));
  // A shape built without the model's spans is priced as before: every layer over the context.
  CHECK(prefill_attention(model, prefill(8192, 0, {})).flops == 36 * 4 * q * full_pairs(8192, 0));
}

TEST_CASE("Llama 4 prices its chunked layers within their 8,192-token chunks",
          "[hardware][window]") {
  RooflineOptions o;
  o.parallelism = {8, 1};
  const RooflineModel model(shipped_model("llama-4-scout"), shipped_hardware("h100-sxm"), o);
  REQUIRE(model.attention_spans() == AttentionSpans{0, 8192});
  // 8,192 prompt tokens after 8,000 cached: 192 finish the first chunk, 8,000 start the next.
  const double chunk_pairs = 192.0 * 8000 + 192.0 * 193 / 2 + 8000.0 * 8001 / 2;
  const double q = 5 * 128;  // 40 heads over TP 8
  const OperatorCost op = prefill_attention(model, prefill(8192, 8000, model.attention_spans()));
  // Every 4th of the 48 layers attends globally, the 36 others within their chunk.
  CHECK(op.flops == 12 * 4 * q * full_pairs(8192, 8000) + 36 * 4 * q * chunk_pairs);
}

TEST_CASE("a model without windows prices a prompt as before, whatever spans its shape carries",
          "[hardware][window]") {
  const RooflineModel model(shipped_model("llama-3-8b"), shipped_hardware("h100-sxm"), {});
  REQUIRE(model.attention_spans() == AttentionSpans{});
  BatchShape with_spans = prefill(3000, 5000, {128, 512});
  with_spans.add_decodes(16, 16 * 900);
  BatchShape without = prefill(3000, 5000, {});
  without.add_decodes(16, 16 * 900);
  const IterationCost a = model.estimate(with_spans);
  const IterationCost b = model.estimate(without);
  for (std::size_t i = 0; i < kOperatorCount; ++i) {
    INFO(operator_name(static_cast<OperatorKind>(i)));
    CHECK(a.operators[i].flops == b.operators[i].flops);
    CHECK(a.operators[i].bytes == b.operators[i].bytes);
    CHECK(a.operators[i].time_s == b.operators[i].time_s);
  }
  CHECK(a.total_time_s == b.total_time_s);
  // 32 layers x 4 x 4,096 per pair: the causal pairs of the whole context.
  CHECK(a.at(OperatorKind::AttentionPrefill).flops == 32 * 4 * 4096.0 * full_pairs(3000, 5000));
}

TEST_CASE("a window wider than the context prices a prompt bit for bit as a full layer",
          "[hardware][window]") {
  const RooflineModel model(shipped_model("mistral-7b"), shipped_hardware("h100-sxm"), {});
  // 3,000 tokens after 1,000 cached: every query within Mistral's 4,096-token window.
  const IterationCost windowed = model.estimate(prefill(3000, 1000, model.attention_spans()));
  const IterationCost full = model.estimate(prefill(3000, 1000, {}));
  for (std::size_t i = 0; i < kOperatorCount; ++i) {
    INFO(operator_name(static_cast<OperatorKind>(i)));
    CHECK(windowed.operators[i].flops == full.operators[i].flops);
    CHECK(windowed.operators[i].bytes == full.operators[i].bytes);
    CHECK(windowed.operators[i].time_s == full.operators[i].time_s);
  }
  // Past the window the sliding layers cost less than the whole context would.
  CHECK(model.estimate(prefill(3000, 5000, model.attention_spans())).total_time_s <
        model.estimate(prefill(3000, 5000, {})).total_time_s);
}
