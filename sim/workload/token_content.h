#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servesim {

// What a request's tokens are, as far as a prefix cache can tell: its leading tokens as runs
// of content, in order (the prompt first, then, where the workload knows it, the output).
// Token p of a segment with id S is the p-th token of content S wherever S appears, so two
// requests hold the same token at a position exactly when their segments agree up to it.
// Tokens beyond the last segment are the request's own (nobody else's). Ids are chosen by the
// workload (a system prompt's group, a conversation's turn, a Mooncake hash id) and mixed
// with a namespace of its own, so that different workloads never collide.
struct ContentSegment {
  std::uint64_t id = 0;
  std::int64_t tokens = 0;  // >= 1
  bool operator==(const ContentSegment&) const = default;
};
using TokenContent = std::vector<ContentSegment>;

// The identity of each full block of `block_size` tokens that `content` covers, chained over
// the prefix as vLLM's block hashes are: block i's identity depends on every token of blocks
// 0..i, so two requests share block i's identity exactly when their first (i + 1) x
// block_size tokens agree. A block only partly covered has none (it holds tokens of the
// request's own). Throws InvariantError for a block size below 1 or a segment shorter than 1.
std::vector<std::uint64_t> block_hashes(std::span<const ContentSegment> content,
                                        std::int64_t block_size);

// One 64-bit mix of two values (splitmix64's finaliser over their combination): what
// block_hashes chains with, and what workloads may use to derive segment ids in a namespace.
std::uint64_t mix_ids(std::uint64_t a, std::uint64_t b) noexcept;

}  // namespace servesim
