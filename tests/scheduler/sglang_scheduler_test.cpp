#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/sglang_scheduler.h"
#include "tests/support/scheduler_bench.h"

using namespace servesim;

namespace {

using test::ids;
using Bench = test::SchedulerBench<SglangScheduler>;

// SGLang's token pool: pages of one token.
std::unique_ptr<IKvCacheAllocator> pool(std::int64_t capacity_tokens) {
  return std::make_unique<PagedAllocator>(capacity_tokens, 1, 0.0);
}

SglangSchedulerOptions options(std::int64_t max_prefill_tokens, std::int64_t chunked_prefill_size,
                               std::int64_t max_running_requests = 0) {
  SglangSchedulerOptions o;
  o.max_prefill_tokens = max_prefill_tokens;
  o.chunked_prefill_size = chunked_prefill_size;
  o.max_running_requests = max_running_requests;
  o.context_len_tokens = 4096;
  return o;
}

std::vector<std::int64_t> tokens_of(const BatchPlan& plan) {
  std::vector<std::int64_t> out;
  for (const auto& w : plan.work)
    out.push_back(w.tokens);
  return out;
}

std::vector<std::int64_t> waiting_ids(const RequestQueues& queues) {
  std::vector<std::int64_t> out;
  for (const Request* r : queues.waiting())
    out.push_back(r->spec.id);
  return out;
}

constexpr double kDecay = (0.7 - 0.7 * 0.14) / 600;

}  // namespace

TEST_CASE("sglang runs a prefill batch apart from the decode batch, and before it",
          "[scheduler][sglang]") {
  Bench b(pool(10000), options(16384, 8192));
  b.arrive(10, 5);
  b.arrive(10, 5);
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{10, 10});
  CHECK(b.step().shape.decode_sequences == 2);
  b.arrive(30, 5);
  const BatchPlan prefill = b.step();  // the newcomer's prompt alone: nobody decodes
  CHECK(ids(prefill) == std::vector<std::int64_t>{2});
  CHECK(prefill.shape.decode_sequences == 0);
  const BatchPlan decode = b.step();
  CHECK(ids(decode) == std::vector<std::int64_t>{0, 1, 2});
  CHECK(decode.shape.prefill_tokens == 0);
}

TEST_CASE("sglang chunks one prompt at a time and fills the rest of the chunk with others",
          "[scheduler][sglang]") {
  Bench b(pool(10000), options(16384, 100));
  b.arrive(150, 3);
  b.arrive(30, 3);
  b.arrive(40, 3);
  // The first prompt fills the chunk: nobody else joins.
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{100});
  // Its last 50 first, then whole prompts while they fit the 50 left: 30 does, 40 is cut.
  const BatchPlan second = b.step();
  CHECK(ids(second) == std::vector<std::int64_t>{0, 1, 2});
  CHECK(tokens_of(second) == std::vector<std::int64_t>{50, 30, 20});
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{20});  // the cut prompt's rest
  CHECK(b.step().shape.decode_sequences == 3);
}

TEST_CASE("sglang's prefill batch stops at max_prefill_tokens, but a first prompt may pass it",
          "[scheduler][sglang]") {
  Bench b(pool(10000), options(100, 0));
  b.arrive(150, 3);
  b.arrive(60, 3);
  b.arrive(60, 3);
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{150});
  // Prefills come first; each plan's budget starts over: 60, and 60 + 60 > 100.
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{60});
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{60});
  CHECK(b.step().shape.decode_sequences == 3);
}

TEST_CASE("sglang reserves output tokens: a newcomer joins only while everyone's fit",
          "[scheduler][sglang]") {
  Bench b(pool(2000), options(16384, 8192));
  Request* a = b.arrive(100, 400);
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0});  // 100 + 400 < 2000
  b.arrive(100, 500);
  Request* c = b.arrive(100, 1000);
  // Free 1900; A will still generate 399 x 0.7 = 279.3. B: 100 + 500 = 600 < 1620.7, in;
  // then C: 100 + 1000 = 1100 >= 1900 - 879.3 = 1020.7: no room, and the batch is full.
  CHECK(ids(b.step()) == std::vector<std::int64_t>{1});
  CHECK(c->state == RequestState::Waiting);
  // Decode steps until A finishes; C waits for the batch to shrink, though the ratio falls.
  std::int64_t decodes = 0;
  while (a->state != RequestState::Finished) {
    CHECK(b.step().shape.prefill_tokens == 0);
    ++decodes;
  }
  CHECK(decodes == 399);
  CHECK(c->state == RequestState::Waiting);
  // The plan after A left decodes B alone and clears the flag; the one after admits C.
  CHECK(ids(b.step()) == std::vector<std::int64_t>{1});
  CHECK(ids(b.step()) == std::vector<std::int64_t>{2});
}

TEST_CASE("sglang admits a waiting prompt as soon as nothing runs, though the batch was full",
          "[scheduler][sglang]") {
  Bench b(pool(1200), options(16384, 8192));
  Request* a = b.arrive(100, 400);
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0});
  // B: 100 + 1000 = 1100 >= 1100 - 399 x 0.7: no room while A runs; the batch is full.
  Request* late = b.arrive(100, 1000);
  while (a->state != RequestState::Finished)
    CHECK(b.step().shape.prefill_tokens == 0);
  CHECK(late->state == RequestState::Waiting);
  // Nothing decodes now: the very next plan admits B rather than leave the replica idle with
  // a prompt waiting (an empty plan would end a run whose requests have all arrived).
  CHECK(ids(b.step()) == std::vector<std::int64_t>{1});
  CHECK(b.scheduler.new_token_ratio() == 0.7);
}

TEST_CASE("sglang's new-token ratio decays by decode step and resets when idle",
          "[scheduler][sglang]") {
  Bench b(pool(10000), options(16384, 8192));
  CHECK(b.scheduler.new_token_ratio() == 0.7);
  b.arrive(10, 4);
  b.step();  // prefill: no decay
  CHECK(b.scheduler.new_token_ratio() == 0.7);
  b.step();
  CHECK(b.scheduler.new_token_ratio() == Approx(0.7 - kDecay));
  b.step();
  b.step();  // the last token
  CHECK(b.scheduler.new_token_ratio() == Approx(0.7 - 3 * kDecay));
  CHECK(b.idle());
  b.step();  // nothing to do: the ratio starts over
  CHECK(b.scheduler.new_token_ratio() == 0.7);
  // Skipped plans (a decode run) decay it as the plans would have, down to 0.098.
  b.scheduler.on_decode_plans_skipped(10);
  CHECK(b.scheduler.new_token_ratio() == Approx(0.7 - 10 * kDecay));
  b.scheduler.on_decode_plans_skipped(100000);
  CHECK(b.scheduler.new_token_ratio() == Approx(0.098));
}

TEST_CASE("sglang retracts the request with the fewest generated tokens to the back of the queue",
          "[scheduler][sglang]") {
  // Outputs past 4,096 tokens are reserved as 4,096 (x the ratio while running), so two
  // long requests get in and, decoding, outgrow the pool.
  Bench b(pool(10000), options(16384, 8192));
  Request* a = b.arrive(100, 9000);
  b.step();
  b.step();
  b.step();  // A has generated 3 tokens
  Request* second = b.arrive(100, 9000);
  // Free 9,898; A reserves 4,096 x ratio; B's 100 + 4,096 fit what is left.
  CHECK(ids(b.step()) == std::vector<std::int64_t>{1});
  Request* c = b.arrive(5000, 100);  // 5,100 do not fit: it waits, and the batch is full
  BatchPlan plan = b.step();
  CHECK(c->state == RequestState::Waiting);
  while (plan.preempted.empty())
    plan = b.step();
  // Memory ran out with A two tokens ahead of B: B goes, behind C though it came first.
  CHECK(plan.preempted == std::vector<Request*>{second});
  CHECK(second->state == RequestState::Preempted);
  CHECK(ids(plan) == std::vector<std::int64_t>{0});
  CHECK(waiting_ids(b.queues()) == std::vector<std::int64_t>{2, 1});
  CHECK(a->generated_tokens == second->generated_tokens + 2 + 1);  // A decoded in this plan
  // The ratio: (A's generated tokens + 20) / A's output tokens, as the plan saw them.
  CHECK(b.scheduler.new_token_ratio() ==
        Approx(static_cast<double>(a->generated_tokens - 1 + 20) / 9000.0));
  // Free memory lasted A 20 decode steps before this one.
  const KvUsage usage = b.allocator->usage(0);
  CHECK(usage.free + usage.cached >= 19);
}

TEST_CASE("sglang retracts the longest prompt first among equal outputs, never the last request",
          "[scheduler][sglang]") {
  Bench b(pool(10000), options(16384, 8192));
  Request* a = b.arrive(101, 9000);
  Request* second = b.arrive(100, 9000);
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0, 1});
  BatchPlan plan = b.step();
  while (plan.preempted.empty())
    plan = b.step();
  CHECK(plan.preempted == std::vector<Request*>{a});  // equal outputs: the longer prompt
  CHECK(second->state == RequestState::Running);
  // B alone runs on until memory runs out again: it is never retracted, and preemption
  // by recompute is left to the plain path, which has no victim either.
  CHECK(ids(plan) == std::vector<std::int64_t>{1});
}

TEST_CASE("sglang keeps the decode batch under max_running_requests, the chunked prompt counted",
          "[scheduler][sglang]") {
  Bench b(pool(10000), options(16384, 100, /*max_running_requests=*/2));
  b.arrive(10, 2);
  b.arrive(150, 5);
  b.arrive(10, 5);
  // The first prompt and 90 tokens of the second: two seats taken.
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{10, 90});
  // The chunked prompt holds a seat, so the third waits though memory abounds.
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{60});
  CHECK(b.queues().waiting().size() == 1);
  CHECK(b.step().shape.decode_sequences == 2);  // the first finishes here
  CHECK(b.step().shape.decode_sequences == 1);  // the batch shrank: the flag clears
  CHECK(ids(b.step()) == std::vector<std::int64_t>{2});
}
