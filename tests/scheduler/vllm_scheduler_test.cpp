#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_scheduler.h"
#include "sim/scheduler/request_lifecycle.h"
#include "tests/support/scheduler_bench.h"

using namespace servesim;

namespace {

using test::ids;

struct Bench : test::SchedulerBench<VllmScheduler> {
  explicit Bench(std::int64_t capacity_tokens, VllmSchedulerOptions options = {},
                 std::int64_t swap_capacity_tokens = 0)
      : SchedulerBench(test::paged(capacity_tokens), options, swap_capacity_tokens) {}
  const PagedAllocator& paged() const { return static_cast<const PagedAllocator&>(*allocator); }
};

}  // namespace

TEST_CASE("vllm admits prompts first, as memory allows, then decodes everyone", "[scheduler]") {
  Bench b(64);  // 4 blocks of 16
  b.arrive(32, 3);
  b.arrive(32, 3);
  b.arrive(16, 3);
  BatchPlan p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});  // the third does not fit
  CHECK(p.shape.prefill_tokens == 64);
  CHECK(p.shape.decode_sequences == 0);
  CHECK(b.queues().waiting().size() == 1);
}

TEST_CASE("vllm preempts the newest running request by recompute when a decode needs a block",
          "[scheduler]") {
  Bench b(64);  // 4 blocks
  Request* a = b.arrive(32, 5);
  Request* c = b.arrive(32, 5);
  b.step();                // both prefilled, memory full, one token each
  BatchPlan p = b.step();  // a needs a third block: c is preempted, a decodes
  CHECK(ids(p) == std::vector<std::int64_t>{0});
  REQUIRE(p.preempted.size() == 1);
  CHECK(p.preempted[0] == c);
  CHECK(c->computed_tokens == 0);
  CHECK(c->state == RequestState::Preempted);
  CHECK(c->preemptions == 1);
  CHECK(c->tokens() == 33);  // prompt plus its one generated token
  CHECK(b.queues().waiting().front() == c);
  CHECK(a->generated_tokens == 2);
  // a holds 3 blocks; c's re-prefill needs 3: it waits until a finishes.
  p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{0});
  b.step();
  b.step();  // a's fifth token: done, memory freed
  CHECK(a->finished());
  p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{1});
  CHECK(p.work[0].prefill);
  CHECK(p.work[0].tokens == 33);  // recomputes prompt + generated
  CHECK(c->generated_tokens == 2);
}

TEST_CASE("vllm respects max_num_seqs and the token budget", "[scheduler]") {
  Bench seqs(16000, VllmSchedulerOptions{2, 8192});
  for (int i = 0; i < 4; ++i)
    seqs.arrive(10, 5);
  CHECK(seqs.step().work.size() == 2);
  Bench budget(16000, VllmSchedulerOptions{256, 100});
  for (int i = 0; i < 4; ++i)
    budget.arrive(40, 5);
  CHECK(budget.step().shape.prefill_tokens == 80);  // a third prompt would exceed 100 tokens
}

TEST_CASE("vllm rejects requests that can never fit", "[scheduler]") {
  const VllmScheduler scheduler(VllmSchedulerOptions{256, 1000});
  const PagedAllocator allocator(640, 16);
  RequestSpec ok{0, {}, 300, 300};
  CHECK_FALSE(scheduler.reject_reason(ok, allocator).has_value());
  RequestSpec too_long{1, {}, 600, 100};
  CHECK(scheduler.reject_reason(too_long, allocator).value().find("KV capacity") !=
        std::string::npos);
  RequestSpec over_budget{2, {}, 900, 200};
  CHECK(scheduler.reject_reason(over_budget, allocator).value().find("max_num_batched_tokens") !=
        std::string::npos);
}

TEST_CASE("vllm with swap space preempts by swap and resumes before new prompts", "[scheduler]") {
  Bench b(64, {}, 1000);  // 4 blocks
  Request* a = b.arrive(32, 5);
  Request* c = b.arrive(32, 5);
  b.step();  // both prefilled: memory full
  Request* late = b.arrive(8, 2);
  BatchPlan p = b.step();  // a needs a block: c is swapped out, keeping its 32 tokens
  REQUIRE(p.preempted.size() == 1);
  CHECK(p.preempted[0] == c);
  CHECK(p.swap_out_tokens == 32);
  CHECK(c->state == RequestState::Swapped);
  CHECK(c->computed_tokens == 32);
  CHECK_FALSE(c->state == RequestState::Preempted);
  CHECK(b.queues().swapped().front() == c);
  CHECK(b.queues().swap().used_tokens == 32);
  // While c waits in swap, no new prompt is admitted.
  while (!a->finished()) {
    p = b.step();
    CHECK(p.swap_in_tokens == 0);
    CHECK(ids(p) == std::vector<std::int64_t>{0});
  }
  p = b.step();  // a is gone: c is copied back and decodes
  CHECK(p.swap_in_tokens == 32);
  CHECK(ids(p) == std::vector<std::int64_t>{1});
  CHECK(c->generated_tokens == 2);
  CHECK(b.queues().swap().used_tokens == 0);
  CHECK(late->computed_tokens == 0);
  p = b.step();  // nothing swapped: the late prompt is admitted
  CHECK(ids(p) == std::vector<std::int64_t>{2});
}

TEST_CASE("vllm falls back to recompute when swap space is full", "[scheduler]") {
  Bench b(64, {}, 16);  // less swap space than the victim's 32 tokens
  b.arrive(32, 5);
  Request* c = b.arrive(32, 5);
  b.step();
  const BatchPlan p = b.step();
  REQUIRE(p.preempted.size() == 1);
  CHECK(p.swap_out_tokens == 0);
  CHECK(c->state != RequestState::Swapped);
  CHECK(c->state == RequestState::Preempted);
  CHECK(c->computed_tokens == 0);
}

TEST_CASE("running requests stay in arrival order, whatever order they join or leave in",
          "[scheduler]") {
  const FirstComeFirstServed order;
  RequestQueues queues(order);
  std::vector<Request> requests(4);
  for (std::size_t i = 0; i < requests.size(); ++i)
    requests[i].spec.id = static_cast<std::int64_t>(i);
  for (const std::size_t i : {1, 3, 0, 2})
    queues.add_running(&requests[i]);
  REQUIRE(queues.running().size() == 4);
  for (std::size_t i = 0; i < requests.size(); ++i)
    CHECK(queues.running()[i] == &requests[i]);
  queues.remove_running(&requests[1]);
  CHECK(queues.running() == std::vector<Request*>{&requests[0], &requests[2], &requests[3]});
  CHECK_THROWS_AS(queues.remove_running(&requests[1]), InvariantError);  // not running now
  Request same_id;  // another request under a running one's id
  same_id.spec.id = 2;
  CHECK_THROWS_AS(queues.remove_running(&same_id), InvariantError);
  CHECK(queues.running().size() == 3);
}

TEST_CASE("vllm decodes oldest first and skips a victim preempted in the same plan",
          "[scheduler]") {
  Bench b(96);  // 6 blocks
  Request* a = b.arrive(32, 8);
  Request* c = b.arrive(32, 8);
  Request* d = b.arrive(16, 8);
  b.step();  // all prefilled: 2 + 2 + 1 blocks, 1 free
  CHECK(b.queues().running().size() == 3);
  // Every decode needs a new block (33, 33 and 17 tokens): a takes the free one, c's grow
  // preempts d (the newest) and takes its block, and the walk does not come back to d.
  BatchPlan p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  REQUIRE(p.preempted.size() == 1);
  CHECK(p.preempted[0] == d);
  CHECK(d->state == RequestState::Preempted);
  CHECK(a->generated_tokens == 2);
  CHECK(c->generated_tokens == 2);
  CHECK(b.queues().running().size() == 2);
  CHECK(b.paged().free_blocks() == 0);
}
