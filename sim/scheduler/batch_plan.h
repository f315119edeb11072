#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "sim/hardware/batch_shape.h"
#include "sim/scheduler/request.h"

namespace servesim {

struct ScheduledWork {
  Request* request = nullptr;
  std::int64_t tokens = 0;  // tokens computed: a prompt or a chunk of it, or 1 for a decode step
  bool prefill = false;     // computes (part of) a (re)prefill, not a decode
};

// One iteration's decision: who computes how many tokens, and who was preempted to make room.
struct BatchPlan {
  std::vector<ScheduledWork> work;
  std::vector<Request*> preempted;
  BatchShape shape;
  std::int64_t swap_out_tokens = 0;  // KV tokens copied to host memory before the iteration
  std::int64_t swap_in_tokens = 0;   // KV tokens copied back
  // Tokens admissions found in the prefix cache (first admissions and re-admissions).
  std::int64_t cached_tokens = 0;
  // Of those, tokens loaded from a host tier over the host link before the iteration.
  std::int64_t host_load_tokens = 0;
  // Whether any request of the plan has content (Request::has_content): only then does the
  // replica commit computed blocks to the prefix cache when the plan completes.
  bool has_content = false;
  // Gathered as decodes are added, for decode runs: their sequences (request ids) in plan
  // order, and the fewest output tokens any of them has still to generate.
  std::vector<std::int64_t> decode_sequences;
  std::int64_t fewest_tokens_left = std::numeric_limits<std::int64_t>::max();

  bool empty() const { return work.empty(); }
  // Empty again, keeping the vectors' capacity.
  void clear() {
    work.clear();
    preempted.clear();
    shape = {};
    swap_out_tokens = 0;
    swap_in_tokens = 0;
    cached_tokens = 0;
    host_load_tokens = 0;
    has_content = false;
    decode_sequences.clear();
    fewest_tokens_left = std::numeric_limits<std::int64_t>::max();
  }
  void add_prefill(Request* request, std::int64_t tokens) {
    work.push_back({request, tokens, true});
    has_content = has_content || request->has_content;
    shape.add_prefill(tokens, request->computed_tokens,
                      request->computed_tokens + tokens == request->tokens());
  }
  void add_decode(Request* request) {
    const std::int64_t sequence = request->spec.id;
    add_decodes(std::span<Request* const>(&request, 1), std::span(&sequence, 1));
  }
  // A speculative step of a decoding request: its last token and `tokens` - 1 drafts (the
  // caller prices them into the shape).
  void add_speculative_step(Request* request, std::int64_t tokens) {
    work.push_back({request, tokens, false});
    has_content = has_content || request->has_content;
  }
  // add_decode for each, in order; `sequences` are their ids (spec.id), in the same order.
  void add_decodes(std::span<Request* const> requests, std::span<const std::int64_t> sequences) {
    // The vectors grow once (a plan adds its whole batch here, or in a few spans when it
    // preempts: room doubles, so that those spans do not copy the plan each time).
    const std::size_t count = requests.size();
    grow_room(work, count);
    decode_sequences.insert(decode_sequences.end(), sequences.begin(), sequences.end());
    std::int64_t context_tokens = 0;
    std::int64_t fewest_left = fewest_tokens_left;
    bool content = has_content;
    for (std::size_t i = 0; i < count; ++i) {
      const Request& request = *requests[i];
      work.push_back({requests[i], 1, false});
      context_tokens += request.computed_tokens + 1;
      fewest_left = std::min(fewest_left, request.output_tokens_left());
      content = content || request.has_content;
    }
    fewest_tokens_left = fewest_left;
    has_content = content;
    shape.add_decodes(static_cast<std::int64_t>(count), context_tokens);
  }

 private:
  template <class T>
  static void grow_room(std::vector<T>& v, std::size_t more) {
    if (v.capacity() - v.size() < more) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
  }
};

}  // namespace servesim
