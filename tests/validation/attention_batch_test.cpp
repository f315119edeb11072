#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

#include "sim/hardware/batch_shape.h"
#include "validation/attention_batch.h"

namespace sv = servesim::validation;

TEST_CASE("decode queries attend to each sequence's whole context", "[validation][attention]") {
  const auto queries = sv::decode_queries(std::vector<std::int64_t>{5, 1, 9});
  REQUIRE(queries.size() == 3);
  CHECK(queries[0].sequence == 0);
  CHECK(queries[0].keys == 5);
  CHECK(queries[2].sequence == 2);
  CHECK(queries[2].keys == 9);
}

TEST_CASE("prefill queries follow the causal mask after the cached prefix",
          "[validation][attention]") {
  const auto queries =
      sv::prefill_queries(std::vector<std::int64_t>{3, 2}, std::vector<std::int64_t>{0, 10});
  REQUIRE(queries.size() == 5);
  CHECK(queries[0].keys == 1);
  CHECK(queries[2].keys == 3);
  CHECK(queries[3].sequence == 1);
  CHECK(queries[3].keys == 11);
  CHECK(queries[4].keys == 12);
  // The query-key pairs equal BatchShape's count for the same chunks.
  servesim::BatchShape shape;
  shape.add_prefill(3, 0);
  shape.add_prefill(2, 10);
  double pairs = 0;
  for (const auto& q : queries)
    pairs += q.keys;
  CHECK(pairs == shape.prefill_attention_pairs);
  CHECK_THROWS(sv::prefill_queries(std::vector<std::int64_t>{1}, std::vector<std::int64_t>{}));
}

TEST_CASE("replay spreads a batch shape's sums evenly and exactly", "[validation][attention]") {
  CHECK(sv::split_evenly(10, 3) == std::vector<std::int64_t>{4, 3, 3});
  CHECK(sv::split_evenly(0, 2) == std::vector<std::int64_t>{0, 0});
  CHECK_THROWS(sv::split_evenly(5, 0));

  servesim::BatchShape shape;
  shape.add_decode(100);
  shape.add_decode(201);
  shape.add_prefill(64, 0);
  shape.add_prefill(31, 512);
  const sv::ReplaySequences seqs = sv::replay_sequences(shape);
  CHECK(seqs.decode_context_tokens == std::vector<std::int64_t>{151, 150});
  CHECK(seqs.prefill_chunk_tokens == std::vector<std::int64_t>{48, 47});
  CHECK(seqs.prefill_cached_tokens == std::vector<std::int64_t>{256, 256});
  const auto sum = [](const std::vector<std::int64_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::int64_t{0});
  };
  CHECK(sum(seqs.decode_context_tokens) == shape.decode_context_tokens);
  CHECK(sum(seqs.prefill_chunk_tokens) == shape.prefill_tokens);
  CHECK(sum(seqs.prefill_chunk_tokens) + sum(seqs.prefill_cached_tokens) ==
        shape.prefill_context_tokens);
  CHECK(sv::replay_sequences(servesim::BatchShape{}).decode_context_tokens.empty());
}
