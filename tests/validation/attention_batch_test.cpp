#include <catch2/catch.hpp>

#include <cmath>
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

namespace {

// The shape the replayed sequences add up to.
servesim::BatchShape shape_of(const sv::ReplaySequences& seqs) {
  servesim::BatchShape shape;
  for (std::size_t i = 0; i < seqs.prefill_chunk_tokens.size(); ++i)
    shape.add_prefill(seqs.prefill_chunk_tokens[i], seqs.prefill_cached_tokens[i]);
  for (const std::int64_t context : seqs.decode_context_tokens)
    shape.add_decode(context);
  return shape;
}

}  // namespace

TEST_CASE("replay rebuilds a batch with the sums the simulator priced", "[validation][attention]") {
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
  // The pair sums tell the chunks apart: a long chunk and a short one after a cached prefix.
  CHECK(seqs.prefill_chunk_tokens == std::vector<std::int64_t>{64, 31});
  CHECK(seqs.prefill_cached_tokens == std::vector<std::int64_t>{0, 512});
  const servesim::BatchShape replayed = shape_of(seqs);
  CHECK(replayed.prefill_attention_pairs == shape.prefill_attention_pairs);
  CHECK(replayed.prefill_masked_pairs == shape.prefill_masked_pairs);
  CHECK(replayed.decode_context_tokens == shape.decode_context_tokens);
  const auto sum = [](const std::vector<std::int64_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::int64_t{0});
  };
  CHECK(sum(seqs.decode_context_tokens) == shape.decode_context_tokens);
  CHECK(sum(seqs.prefill_chunk_tokens) == shape.prefill_tokens);
  CHECK(sum(seqs.prefill_chunk_tokens) + sum(seqs.prefill_cached_tokens) ==
        shape.prefill_context_tokens);
  CHECK(sv::replay_sequences(servesim::BatchShape{}).decode_context_tokens.empty());
}

TEST_CASE("replay splits equal chunks evenly and matches one long chunk beside equal ones",
          "[validation][attention]") {
  // Equal chunks (or a file whose pair sums were reconstructed from equal chunks).
  servesim::BatchShape equal;
  equal.add_prefill(100, 50);
  equal.add_prefill(100, 50);
  equal.add_prefill(100, 50);
  const sv::ReplaySequences even = sv::replay_sequences(equal);
  CHECK(even.prefill_chunk_tokens == std::vector<std::int64_t>{100, 100, 100});
  CHECK(even.prefill_cached_tokens == std::vector<std::int64_t>{50, 50, 50});

  // A 2,048-token chunk after 4,096 cached tokens beside three fresh 16-token prompts: an even
  // split would replay a third of the attention pairs.
  servesim::BatchShape mixed;
  mixed.add_prefill(2048, 4096);
  for (int i = 0; i < 3; ++i)
    mixed.add_prefill(16, 0);
  mixed.add_decode(900);
  const sv::ReplaySequences seqs = sv::replay_sequences(mixed);
  CHECK(seqs.prefill_chunk_tokens == std::vector<std::int64_t>{2048, 16, 16, 16});
  CHECK(seqs.prefill_cached_tokens == std::vector<std::int64_t>{4096, 0, 0, 0});
  const servesim::BatchShape replayed = shape_of(seqs);
  CHECK(replayed.prefill_attention_pairs == mixed.prefill_attention_pairs);
  CHECK(replayed.prefill_masked_pairs == mixed.prefill_masked_pairs);
  CHECK(replayed.prefill_context_tokens == mixed.prefill_context_tokens);

  // Chunks no "one long, rest equal" split reproduces: the sums of tokens and contexts stay
  // exact and the pairs come closer than an even split's.
  servesim::BatchShape uneven;
  uneven.add_prefill(500, 0);
  uneven.add_prefill(300, 1000);
  uneven.add_prefill(10, 0);
  const servesim::BatchShape rebuilt = shape_of(sv::replay_sequences(uneven));
  CHECK(rebuilt.prefill_tokens == uneven.prefill_tokens);
  CHECK(rebuilt.prefill_context_tokens == uneven.prefill_context_tokens);
  servesim::BatchShape split;
  for (int i = 0; i < 3; ++i)
    split.add_prefill(270, i == 0 ? 334 : 333);
  const auto error = [&](const servesim::BatchShape& s) {
    return std::abs(s.prefill_attention_pairs - uneven.prefill_attention_pairs);
  };
  CHECK(error(rebuilt) < error(split));
  CHECK(rebuilt.prefill_masked_pairs <= uneven.prefill_masked_pairs);
  CHECK(rebuilt.prefill_masked_pairs > split.prefill_masked_pairs);
}
