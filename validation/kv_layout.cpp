#include "validation/kv_layout.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace servesim::validation {
namespace {

void check_contexts(std::span<const std::int64_t> context_tokens) {
  for (const std::int64_t tokens : context_tokens) {
    if (tokens <= 0) {
      throw std::invalid_argument("KvLayout: context lengths must be positive, got " +
                                  std::to_string(tokens));
    }
  }
}

}  // namespace

KvLayout KvLayout::contiguous(std::span<const std::int64_t> context_tokens) {
  check_contexts(context_tokens);
  KvLayout layout;
  layout.context_.assign(context_tokens.begin(), context_tokens.end());
  for (const std::int64_t tokens : context_tokens) {
    layout.starts_.push_back(layout.total_rows_);
    layout.total_rows_ += tokens;
  }
  return layout;
}

KvLayout KvLayout::paged(std::span<const std::int64_t> context_tokens, std::int64_t block_size,
                         std::uint64_t seed) {
  check_contexts(context_tokens);
  if (block_size <= 0) throw std::invalid_argument("KvLayout: block size must be positive");
  KvLayout layout;
  layout.context_.assign(context_tokens.begin(), context_tokens.end());
  layout.block_size_ = block_size;
  std::int64_t blocks = 0;
  for (const std::int64_t tokens : context_tokens) {
    const std::int64_t needed = (tokens + block_size - 1) / block_size;
    layout.max_blocks_ = std::max(layout.max_blocks_, needed);
    blocks += needed;
  }
  std::vector<std::int32_t> physical(static_cast<std::size_t>(blocks));
  std::iota(physical.begin(), physical.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(physical.begin(), physical.end(), rng);
  layout.block_table_.assign(static_cast<std::size_t>(layout.sequences() * layout.max_blocks_), -1);
  std::size_t next = 0;
  for (std::int64_t s = 0; s < layout.sequences(); ++s) {
    const std::int64_t needed = (context_tokens[s] + block_size - 1) / block_size;
    for (std::int64_t b = 0; b < needed; ++b) {
      layout.block_table_[static_cast<std::size_t>(s * layout.max_blocks_ + b)] = physical[next++];
    }
  }
  layout.total_rows_ = blocks * block_size;
  return layout;
}

std::int64_t KvLayout::row(std::int64_t sequence, std::int64_t token) const {
  if (token < 0 || token >= context_tokens(sequence)) {
    throw std::out_of_range("KvLayout::row: token " + std::to_string(token) +
                            " outside the context of sequence " + std::to_string(sequence));
  }
  if (block_size_ == 0) return starts_[static_cast<std::size_t>(sequence)] + token;
  const std::int32_t block =
      block_table_[static_cast<std::size_t>(sequence * max_blocks_ + token / block_size_)];
  return std::int64_t{block} * block_size_ + token % block_size_;
}

std::vector<std::uint16_t> relayout(std::span<const std::uint16_t> source, const KvLayout& from,
                                    const KvLayout& to, std::int64_t row_elements) {
  if (from.sequences() != to.sequences() ||
      static_cast<std::int64_t>(source.size()) != from.total_rows() * row_elements) {
    throw std::invalid_argument("relayout: layouts or buffer size do not match");
  }
  std::vector<std::uint16_t> result(static_cast<std::size_t>(to.total_rows() * row_elements), 0);
  for (std::int64_t s = 0; s < from.sequences(); ++s) {
    if (from.context_tokens(s) != to.context_tokens(s)) {
      throw std::invalid_argument("relayout: context lengths differ");
    }
    for (std::int64_t t = 0; t < from.context_tokens(s); ++t) {
      const auto in = source.begin() + from.row(s, t) * row_elements;
      std::copy(in, in + row_elements, result.begin() + to.row(s, t) * row_elements);
    }
  }
  return result;
}

}  // namespace servesim::validation
