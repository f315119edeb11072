#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/workload/token_content.h"

using namespace servesim;

TEST_CASE("block_hashes gives one identity per full block the content covers") {
  const TokenContent content{{7, 20}, {8, 13}};  // 33 tokens
  CHECK(block_hashes(content, 16).size() == 2);
  CHECK(block_hashes(content, 11).size() == 3);
  CHECK(block_hashes(content, 34).empty());
}

TEST_CASE("Two requests share block i exactly when their first i + 1 blocks agree") {
  // One system prompt of 40 tokens, then different questions.
  const TokenContent a{{1, 40}, {100, 30}};
  const TokenContent b{{1, 40}, {200, 30}};
  const auto ha = block_hashes(a, 16);
  const auto hb = block_hashes(b, 16);
  REQUIRE(ha.size() == 4);
  REQUIRE(hb.size() == 4);
  CHECK(ha[0] == hb[0]);
  CHECK(ha[1] == hb[1]);
  CHECK(ha[2] != hb[2]);  // tokens 32..47 mix the prompt and the question
  CHECK(ha[3] != hb[3]);
}

TEST_CASE("A block's identity depends on the blocks before it and on segment offsets") {
  // The same segment 2 after different first blocks: chained, so different.
  const auto x = block_hashes(TokenContent{{1, 16}, {2, 16}}, 16);
  const auto y = block_hashes(TokenContent{{3, 16}, {2, 16}}, 16);
  CHECK(x[1] != y[1]);
  // How content is cut into segments matters only through the token identities: segment 5's
  // tokens 16..31 differ from its tokens 0..15.
  const auto whole = block_hashes(TokenContent{{5, 32}}, 16);
  CHECK(whole[0] != whole[1]);
  // The same prefix told as one segment or as a longer one cut later agrees on its blocks.
  const auto shorter = block_hashes(TokenContent{{5, 20}}, 16);
  CHECK(shorter.size() == 1);
  CHECK(shorter[0] == whole[0]);
}

TEST_CASE("block_hashes refuses a zero block size and an empty segment") {
  CHECK_THROWS_AS(block_hashes(TokenContent{{1, 4}}, 0), InvariantError);
  CHECK_THROWS_AS(block_hashes(TokenContent{{1, 0}}, 4), InvariantError);
}
