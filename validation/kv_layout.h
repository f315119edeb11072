#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servesim::validation {

// Where each token's key (or value) row of each sequence lives in a KV cache buffer. A row
// holds num_kv_heads x head_dim elements. Contiguous: every sequence owns one run of rows,
// sequences one after another. Paged: fixed blocks of `block_size` rows; a block table maps
// a sequence's logical block to a physical block, and physical blocks are shuffled so that a
// kernel that ignored the table would read the wrong rows.
class KvLayout {
 public:
  static KvLayout contiguous(std::span<const std::int64_t> context_tokens);
  // `seed` drives the shuffle; the same seed gives the same table.
  static KvLayout paged(std::span<const std::int64_t> context_tokens, std::int64_t block_size,
                        std::uint64_t seed);

  std::int64_t sequences() const noexcept { return static_cast<std::int64_t>(context_.size()); }
  std::int64_t context_tokens(std::int64_t sequence) const { return context_.at(sequence); }
  std::int64_t block_size() const noexcept { return block_size_; }  // 0: contiguous
  // Rows the buffer must hold (paged: every physical block, whole).
  std::int64_t total_rows() const noexcept { return total_rows_; }
  // The buffer row of token `token` of `sequence`.
  std::int64_t row(std::int64_t sequence, std::int64_t token) const;

  // What the device kernels read. Contiguous: first row of each sequence. Paged: the
  // block table, sequence-major, max_blocks_per_sequence() entries per sequence (-1 pads).
  const std::vector<std::int64_t>& sequence_start_rows() const noexcept { return starts_; }
  const std::vector<std::int32_t>& block_table() const noexcept { return block_table_; }
  std::int64_t max_blocks_per_sequence() const noexcept { return max_blocks_; }

 private:
  std::vector<std::int64_t> context_;
  std::int64_t block_size_ = 0;
  std::int64_t total_rows_ = 0;
  std::vector<std::int64_t> starts_;
  std::vector<std::int32_t> block_table_;
  std::int64_t max_blocks_ = 0;
};

// Copies every token row from a buffer laid out as `from` into one laid out as `to` (same
// sequences and context lengths), so both layouts hold the same keys and values. Rows of
// `to` that belong to no token (the tail of a last block) are zero.
std::vector<std::uint16_t> relayout(std::span<const std::uint16_t> source, const KvLayout& from,
                                    const KvLayout& to, std::int64_t row_elements);

}  // namespace servesim::validation
