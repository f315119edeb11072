#include "sim/scheduler/impl/sglang_scheduler.h"

#include <algorithm>
#include <limits>

#include "sim/core/error.h"
#include "sim/memory/decode_round_allocator.h"
#include "sim/scheduler/preemption.h"
#include "sim/scheduler/reject_reasons.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

namespace {

// Whether the KV cache can hold `rounds` more decode tokens of each of `sequences` (SGLang's
// check_decode_mem for one round, retract_decode's headroom for more).
bool rounds_fit(IKvCacheAllocator& allocator, std::span<const std::int64_t> sequences,
                std::int64_t rounds) {
  if (const IDecodeRoundAllocator* fast = allocator.decode_rounds()) {
    return fast->decode_rounds_available(sequences, rounds) >= rounds;
  }
  const KvUsage usage = allocator.usage(0);
  return usage.free + usage.cached >= rounds * static_cast<std::int64_t>(sequences.size());
}

// PrefillAdder's books for one prefill plan: the KV tokens free or evictable now, less what
// the decode batch will still generate at the current ratio and what the plan's prompts take,
// and the step's prompt-token budgets.
struct PrefillBooks {
  PrefillBooks(const IKvCacheAllocator& allocator, const std::vector<Request*>& running,
               double new_token_ratio, std::int64_t clip_max_new_tokens,
               const SglangSchedulerOptions& options)
      : input_left(options.max_prefill_tokens),
        chunk_left(options.chunked_prefill_size > 0 ? options.chunked_prefill_size
                                                    : std::numeric_limits<std::int64_t>::max()) {
    const KvUsage usage = allocator.usage(0);
    available = static_cast<double>(usage.free + usage.cached);
    for (const Request* request : running) {
      if (request->prefilling()) continue;
      total_offset +=
          static_cast<double>(std::min(request->output_tokens_left(), clip_max_new_tokens)) *
          new_token_ratio;
    }
  }
  // A prompt's `tokens` join the plan, reserving `reserved_output` tokens of its output.
  void charge(std::int64_t tokens, std::int64_t reserved_output) {
    total_offset += static_cast<double>(tokens + reserved_output);
    current_offset += static_cast<double>(tokens);
    input_left -= tokens;
    chunk_left -= tokens;
  }
  // budget_state: whether the walk goes on; out of memory (NO_TOKEN) marks the batch full.
  bool budget_left(bool& batch_is_full) const {
    if (available - total_offset <= 0 || available - current_offset <= 0) {
      batch_is_full = true;
      return false;
    }
    return input_left > 0 && chunk_left > 0;
  }

  double available = 0;
  double total_offset = 0;
  double current_offset = 0;
  std::int64_t input_left;
  std::int64_t chunk_left;
};

}  // namespace

SglangScheduler::SglangScheduler(const SglangSchedulerOptions& options)
    : options_(options), queues_(order_) {
  if (options.max_running_requests < 0) {
    throw InputError("scheduler.max_running_requests",
                     "expected 0 (derived from the KV pool) or more requests, got " +
                         std::to_string(options.max_running_requests));
  }
  if (options.max_prefill_tokens < 1) {
    throw InputError(
        "scheduler.max_prefill_tokens",
        "expected at least 1 token, got " + std::to_string(options.max_prefill_tokens));
  }
  if (options.chunked_prefill_size < 0) {
    throw InputError(
        "scheduler.chunked_prefill_size",
        "expected 0 (off) or more tokens, got " + std::to_string(options.chunked_prefill_size));
  }
}

std::optional<std::string> SglangScheduler::reject_reason(
    const RequestSpec& request, const IKvCacheAllocator& allocator) const {
  return kv_capacity_reject_reason(request, allocator);
}

void SglangScheduler::enqueue(Request* request) {
  last_arrival_ = std::max(last_arrival_, request->spec.id);
  queues_.enqueue(request);
}

void SglangScheduler::retire(std::span<Request* const> finished) {
  queues_.retire(finished);
  for (const Request* request : finished) {
    if (request->preemptions > 0) order_.forget(*request);
  }
  batch_shrank_ = batch_shrank_ || !finished.empty();
}

BatchBudget SglangScheduler::budget() const {
  BatchBudget budget;
  // A first prompt may pass max_prefill_tokens unless chunking cuts it.
  if (options_.chunked_prefill_size > 0) {
    budget.prefill_tokens = std::max(options_.max_prefill_tokens, options_.chunked_prefill_size);
  }
  if (options_.max_running_requests > 0) budget.sequences = options_.max_running_requests;
  return budget;
}

std::int64_t SglangScheduler::max_running(const IKvCacheAllocator& allocator) const {
  if (options_.max_running_requests > 0) return options_.max_running_requests;
  // ModelRunner sizes the request pool at max_total_num_tokens / context_len x 512 slots,
  // within [2048, 4096]; the scheduler takes half the token pool, within that.
  const std::int64_t pool_tokens = allocator.capacity_tokens();
  const std::int64_t context = std::max<std::int64_t>(options_.context_len_tokens, 1);
  const std::int64_t request_slots =
      std::clamp<std::int64_t>(pool_tokens / context * 512, 2048, 4096);
  return std::max<std::int64_t>(std::min(pool_tokens / 2, request_slots), 1);
}

void SglangScheduler::decay_ratio(std::int64_t steps) {
  for (std::int64_t i = 0; i < steps && new_token_ratio_ > kMinNewTokenRatio; ++i)
    new_token_ratio_ = std::max(new_token_ratio_ - kNewTokenRatioDecay, kMinNewTokenRatio);
}

void SglangScheduler::on_decode_plans_skipped(std::int64_t plans) {
  decay_ratio(plans);
}

void SglangScheduler::plan(IKvCacheAllocator& allocator, BatchPlan& plan) {
  last_plan_repeats_ = true;
  if (plan_prefill(allocator, plan)) return;
  plan_decode(allocator, plan);
  if (!plan.empty() || !queues_.running().empty()) return;
  // An idle replica starts over with the initial ratio (Scheduler.self_check_during_idle).
  new_token_ratio_ = kInitNewTokenRatio;
  // With nothing running the batch is not full (update_running_batch clears the flag when
  // the filtered batch is empty), and SGLang's loop tries a prefill at its next turn: a
  // replica never idles while a prompt it can hold waits.
  if (!queues_.waiting().empty()) {
    batch_is_full_ = false;
    plan_prefill(allocator, plan);
  }
}

bool SglangScheduler::plan_prefill(IKvCacheAllocator& allocator, BatchPlan& plan) {
  const std::vector<Request*>& running = queues_.running();
  Request* chunked = nullptr;
  std::int64_t decode_batch = 0;
  for (Request* request : running) {
    if (!request->prefilling()) {
      ++decode_batch;
    } else if (!request->in_flight) {
      chunked = request;
    }
  }
  const std::int64_t seats = max_running(allocator) - decode_batch;
  if (chunked == nullptr) {
    if (queues_.waiting().empty() || batch_is_full_) return false;
    if (seats <= 0) {
      batch_is_full_ = true;
      return false;
    }
  }
  PrefillBooks books{allocator, running, new_token_ratio_, kClipMaxNewTokens, options_};
  bool keep_going = true;
  if (chunked != nullptr) {
    const std::int64_t tokens = std::min(chunked->uncomputed_tokens(), books.chunk_left);
    // The reservations normally leave the room; where decodes outgrew them, the newest
    // running request makes room, as under vllm_v1 (SGLang would fail the allocation).
    if (grow_or_preempt(chunked, tokens, queues_, allocator, plan) != GrowthOutcome::Grown) {
      return false;
    }
    const bool last_chunk = tokens == chunked->uncomputed_tokens();
    plan.add_prefill(chunked, tokens);
    books.charge(tokens, last_chunk ? std::min(chunked->spec.output_tokens, kClipMaxNewTokens)
                                    : std::int64_t{0});
    keep_going = books.budget_left(batch_is_full_);
  }
  // The seats count the prompt being chunked, which is not in the decode batch yet.
  std::int64_t joined = chunked != nullptr ? 1 : 0;
  bool chunk_taken = false;
  while (keep_going && !chunk_taken && !queues_.waiting().empty()) {
    if (joined >= seats) {
      batch_is_full_ = true;
      break;
    }
    const Request* request = queues_.waiting().front();
    const PrefixKey key = prefix_key(*request);
    const std::int64_t cached = computed_at_admission(allocator, *request, key);
    const std::int64_t extend = request->tokens() - cached;
    const std::int64_t reserved = std::min(request->spec.output_tokens, kClipMaxNewTokens);
    if (static_cast<double>(extend + reserved) >= books.available - books.total_offset) {
      batch_is_full_ = true;  // NO_TOKEN
      break;
    }
    if (extend > books.input_left && !plan.empty()) break;  // OTHER
    std::int64_t tokens = extend;
    if (extend > books.chunk_left) {
      tokens = books.chunk_left;  // this prompt is the one chunked now
      chunk_taken = true;
    }
    if (!allocator.can_admit_prefix(key, cached + tokens, request->final_tokens())) {
      batch_is_full_ = true;
      break;
    }
    admit_first_waiting(queues_, allocator, plan, cached + tokens);
    ++joined;
    books.charge(tokens, chunk_taken ? std::int64_t{0} : reserved);
    keep_going = books.budget_left(batch_is_full_);
  }
  return !plan.empty();
}

void SglangScheduler::plan_decode(IKvCacheAllocator& allocator, BatchPlan& plan) {
  if (batch_shrank_) {
    batch_shrank_ = false;
    batch_is_full_ = false;
    // The next plan tries a prefill again: this decode-only plan does not repeat.
    last_plan_repeats_ = queues_.waiting().empty();
  }
  gather_decoding(queues_, scratch_);
  if (scratch_.requests.empty()) return;
  if (rounds_fit(allocator, scratch_.sequences, 1)) {
    decay_ratio(1);
  } else {
    retract(allocator, plan);
    batch_is_full_ = false;
    last_plan_repeats_ = false;
  }
  // Retraction leaves room for every token but where a prompt being chunked holds the
  // memory; then the newest running request makes room, as a plain decode would.
  decode_gathered_in_order(queues_, allocator, plan, scratch_);
}

void SglangScheduler::retract(IKvCacheAllocator& allocator, BatchPlan& plan) {
  std::vector<Request*>& decoding = scratch_.requests;
  std::vector<std::int64_t>& sequences = scratch_.sequences;
  // ScheduleBatch.retract_decode: sorted by (generated tokens, -prompt tokens), descending,
  // and retracted from the end of that order.
  std::vector<Request*> order = decoding;
  std::stable_sort(order.begin(), order.end(), [](const Request* a, const Request* b) {
    if (a->generated_tokens != b->generated_tokens)
      return a->generated_tokens > b->generated_tokens;
    return a->spec.prompt_tokens < b->spec.prompt_tokens;
  });
  bool first = true;
  while (order.size() > 1 && (first || !rounds_fit(allocator, sequences, kRetractDecodeSteps))) {
    first = false;
    Request* victim = order.back();
    order.pop_back();
    order_.send_to_back(*victim, last_arrival_);
    preempt(victim, queues_, allocator, plan);
    const auto at = std::find(decoding.begin(), decoding.end(), victim) - decoding.begin();
    decoding.erase(decoding.begin() + at);
    sequences.erase(sequences.begin() + at);
  }
  std::int64_t generated = 0;
  std::int64_t outputs = 0;
  for (const Request* request : decoding) {
    generated += request->generated_tokens;
    outputs += request->spec.output_tokens;
  }
  new_token_ratio_ = std::min(
      1.0, static_cast<double>(generated +
                               kRetractDecodeSteps * static_cast<std::int64_t>(decoding.size())) /
               static_cast<double>(std::max<std::int64_t>(outputs, 1)));
}

}  // namespace servesim
