#pragma once

#include <cstdint>
#include <span>
#include <unordered_set>

#include "sim/workload/token_content.h"

namespace servesim {

// The prefix reuse a workload offers, told from its content alone (no cache, no simulation):
// the hit ratio an unbounded prefix cache would reach if every request's blocks were computed
// before the next request arrived. Requests are added in arrival order. A request hits the
// longest run of its leading full blocks (block_hashes) that any earlier request held, capped
// at its prompt minus one token rounded down to whole blocks (the last prompt token is always
// computed, as vLLM does); then every full block of its content (prompt and, where the content
// says, output) counts as held. The ratio is hit tokens over prompt tokens, as vLLM counts its
// prefix cache hits over queries.
class UnboundedPrefixReuse final {
 public:
  // Throws InvariantError for a block size below 1.
  explicit UnboundedPrefixReuse(std::int64_t block_tokens);

  // Adds the next request: its content and prompt length (>= 1); returns its hit tokens.
  std::int64_t add(std::span<const ContentSegment> content, std::int64_t prompt_tokens);

  std::int64_t prompt_tokens() const { return prompt_tokens_; }
  std::int64_t hit_tokens() const { return hit_tokens_; }
  // hit_tokens / prompt_tokens; 0 before any request.
  double hit_ratio() const;

 private:
  std::int64_t block_tokens_;
  std::unordered_set<std::uint64_t> held_;
  std::int64_t prompt_tokens_ = 0;
  std::int64_t hit_tokens_ = 0;
};

}  // namespace servesim
