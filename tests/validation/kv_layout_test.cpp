#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "validation/kv_layout.h"

namespace sv = servesim::validation;

TEST_CASE("a contiguous KV layout puts sequences one after another", "[validation][kv]") {
  const std::vector<std::int64_t> contexts{3, 1, 5};
  const sv::KvLayout layout = sv::KvLayout::contiguous(contexts);
  CHECK(layout.block_size() == 0);
  CHECK(layout.total_rows() == 9);
  CHECK(layout.sequence_start_rows() == std::vector<std::int64_t>{0, 3, 4});
  CHECK(layout.row(0, 2) == 2);
  CHECK(layout.row(1, 0) == 3);
  CHECK(layout.row(2, 4) == 8);
  CHECK_THROWS(layout.row(1, 1));
  CHECK_THROWS(sv::KvLayout::contiguous(std::vector<std::int64_t>{4, 0}));
}

TEST_CASE("a paged KV layout maps every token to its own slot through shuffled blocks",
          "[validation][kv]") {
  const std::vector<std::int64_t> contexts{33, 1, 16, 100};
  const std::int64_t block_size = 16;
  const sv::KvLayout layout = sv::KvLayout::paged(contexts, block_size, 7);
  // ceil(33/16) + 1 + 1 + ceil(100/16) = 3 + 1 + 1 + 7 blocks.
  CHECK(layout.total_rows() == 12 * block_size);
  CHECK(layout.max_blocks_per_sequence() == 7);
  REQUIRE(layout.block_table().size() == 4 * 7);

  std::set<std::int64_t> rows;
  std::int64_t tokens = 0;
  for (std::int64_t s = 0; s < layout.sequences(); ++s) {
    for (std::int64_t t = 0; t < contexts[static_cast<std::size_t>(s)]; ++t) {
      const std::int64_t row = layout.row(s, t);
      CHECK(row >= 0);
      CHECK(row < layout.total_rows());
      rows.insert(row);
      ++tokens;
      // Tokens of one block stay together, in order.
      if (t % block_size != 0) CHECK(row == layout.row(s, t - 1) + 1);
    }
  }
  CHECK(static_cast<std::int64_t>(rows.size()) == tokens);

  // The used table entries are a permutation of the physical blocks, not the identity.
  std::vector<std::int32_t> used;
  for (const std::int32_t block : layout.block_table())
    if (block >= 0) used.push_back(block);
  std::vector<std::int32_t> sorted = used;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int32_t> identity(12);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(sorted == identity);
  CHECK(used != identity);
  CHECK(std::count(layout.block_table().begin(), layout.block_table().end(), -1) == 28 - 12);

  // Deterministic per seed, different across seeds.
  CHECK(sv::KvLayout::paged(contexts, block_size, 7).block_table() == layout.block_table());
  CHECK(sv::KvLayout::paged(contexts, block_size, 8).block_table() != layout.block_table());
  CHECK_THROWS(sv::KvLayout::paged(contexts, 0, 7));
}

TEST_CASE("relayout carries the same rows between contiguous and paged buffers",
          "[validation][kv]") {
  const std::vector<std::int64_t> contexts{5, 9, 2};
  const std::int64_t row_elements = 3;
  const sv::KvLayout contiguous = sv::KvLayout::contiguous(contexts);
  const sv::KvLayout paged = sv::KvLayout::paged(contexts, 4, 1);
  std::vector<std::uint16_t> data(static_cast<std::size_t>(contiguous.total_rows() * row_elements));
  std::iota(data.begin(), data.end(), std::uint16_t{1});

  const auto paged_data = sv::relayout(data, contiguous, paged, row_elements);
  REQUIRE(static_cast<std::int64_t>(paged_data.size()) == paged.total_rows() * row_elements);
  for (std::int64_t s = 0; s < 3; ++s) {
    for (std::int64_t t = 0; t < contexts[static_cast<std::size_t>(s)]; ++t) {
      for (std::int64_t e = 0; e < row_elements; ++e) {
        CHECK(paged_data[static_cast<std::size_t>(paged.row(s, t) * row_elements + e)] ==
              data[static_cast<std::size_t>(contiguous.row(s, t) * row_elements + e)]);
      }
    }
  }
  // Block tails hold no token and stay zero: 2 + 3 + 1 blocks of 4 rows for 16 tokens.
  CHECK(paged.total_rows() == 24);
  CHECK(std::count(paged_data.begin(), paged_data.end(), 0) == (24 - 16) * row_elements);
  CHECK(sv::relayout(paged_data, paged, contiguous, row_elements) == data);
  CHECK_THROWS(sv::relayout(data, paged, contiguous, row_elements));  // wrong buffer size
}
