#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/scheduler/impl/static_scheduler.h"
#include "tests/support/scheduler_bench.h"

using namespace servesim;

namespace {

using test::ids;
using test::paged;
using test::ReservingAllocator;
struct Bench : test::SchedulerBench<StaticScheduler> {
  Bench(std::unique_ptr<IKvCacheAllocator> kv, std::int64_t batch_size)
      : SchedulerBench(std::move(kv), StaticSchedulerOptions{batch_size}) {}
};

}  // namespace

TEST_CASE("static batch runs until its longest member finishes, without refill", "[scheduler]") {
  Bench b(paged(1024), 2);
  Request* a = b.arrive(10, 2);
  Request* c = b.arrive(12, 4);
  b.arrive(8, 1);
  BatchPlan p = b.step();  // both prompts in one iteration; the third waits
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  CHECK(p.shape.prefill_sequences == 2);
  CHECK(p.shape.prefill_tokens == 22);
  CHECK(p.shape.decode_sequences == 0);
  CHECK(p.shape.sampled_sequences == 2);
  CHECK(b.queues().waiting().size() == 1);
  p = b.step();  // both decode; a finishes
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  CHECK(p.shape.decode_sequences == 2);
  CHECK(a->finished());
  for (int i = 0; i < 2; ++i) {  // c alone, its free seat not refilled
    p = b.step();
    CHECK(ids(p) == std::vector<std::int64_t>{1});
    CHECK(b.queues().waiting().size() == 1);
  }
  CHECK(c->finished());
  CHECK(b.queues().running().empty());
  p = b.step();  // the next batch
  CHECK(ids(p) == std::vector<std::int64_t>{2});
  CHECK(p.work[0].prefill);
}

TEST_CASE("static batch admits only members whose final lengths fit together", "[scheduler]") {
  // 4 blocks of 16. Three requests of 10 + 7 = 17 tokens sum to 51 tokens, but each ends
  // in 2 blocks: only two fit, and a token count alone would have let the third in.
  Bench b(paged(64), 4);
  for (int i = 0; i < 3; ++i)
    b.arrive(10, 7);
  BatchPlan p = b.launch();
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  // The trial admissions at final length are undone: the cache holds the prompts only.
  CHECK(b.allocator->usage(0).token_states == 20);
  CHECK(b.allocator->sequences() == 2);
  b.complete(p);
  int iterations = 1;
  while (!b.idle()) {
    p = b.step();
    CHECK(p.preempted.empty());
    ++iterations;
  }
  CHECK(iterations == 7 + 7);  // two batches of 7 iterations each
  for (const auto& r : b.requests)
    CHECK(r->finished());
}

TEST_CASE("static batch forms first-come first-served, skipping nobody", "[scheduler]") {
  Bench b(paged(64), 4);
  b.arrive(16, 16);  // 2 blocks at the end
  b.arrive(24, 24);  // 3 blocks: does not fit beside the first
  b.arrive(8, 8);    // would fit, but it is behind the second
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0});
}

TEST_CASE("static batch works with reservations made at admission", "[scheduler]") {
  Bench b(std::make_unique<ReservingAllocator>(100), 8);
  b.arrive(20, 30);
  b.arrive(20, 30);
  b.arrive(10, 10);  // a third region of 20 does not fit beside two of 50
  BatchPlan p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  for (int i = 1; i < 30; ++i)
    CHECK(b.step().shape.decode_sequences == 2);
  CHECK(b.queues().running().empty());
  CHECK(ids(b.step()) == std::vector<std::int64_t>{2});
}

TEST_CASE("static batch leaves members in flight alone", "[scheduler]") {
  Bench b(paged(1024), 2);
  b.arrive(10, 3);
  b.arrive(10, 3);
  const BatchPlan first = b.launch();
  CHECK(b.launch().empty());  // the pipeline still holds the whole batch
  b.complete(first);
  CHECK(b.launch().shape.decode_sequences == 2);
}

TEST_CASE("static scheduler rejects what can never fit and bad options", "[scheduler]") {
  const StaticScheduler scheduler(StaticSchedulerOptions{4});
  const PagedAllocator allocator(640, 16);
  CHECK_FALSE(scheduler.reject_reason(RequestSpec{0, {}, 300, 300}, allocator).has_value());
  CHECK_THAT(scheduler.reject_reason(RequestSpec{1, {}, 600, 100}, allocator).value(),
             Catch::Contains("KV capacity"));
  CHECK_THROWS_AS(StaticScheduler(StaticSchedulerOptions{0}), InputError);
  CHECK_THROWS_WITH(StaticScheduler(StaticSchedulerOptions{0}),
                    Catch::Contains("scheduler.batch_size"));
}
