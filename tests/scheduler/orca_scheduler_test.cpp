#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/scheduler/impl/orca_scheduler.h"
#include "tests/support/scheduler_bench.h"

using namespace servesim;

namespace {

using test::ids;
using test::paged;
using test::ReservingAllocator;
using Bench = test::SchedulerBench<OrcaScheduler>;

}  // namespace

TEST_CASE("orca mixes new prefills and running decodes in one iteration", "[scheduler]") {
  Bench b(paged(1024), OrcaSchedulerOptions{4, 8192});
  b.arrive(8, 3);
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0});
  b.arrive(10, 3);
  b.arrive(12, 3);
  const BatchPlan p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1, 2});
  CHECK_FALSE(p.work[0].prefill);
  CHECK(p.work[1].prefill);
  CHECK(p.work[2].prefill);
  CHECK(p.shape.decode_sequences == 1);
  CHECK(p.shape.prefill_sequences == 2);
  CHECK(p.shape.prefill_tokens == 22);
  CHECK(p.shape.sampled_sequences == 3);
}

TEST_CASE("orca fills a seat as soon as it frees, up to max_batch_size", "[scheduler]") {
  Bench b(paged(1024), OrcaSchedulerOptions{2, 8192});
  b.arrive(8, 1);
  b.arrive(8, 3);
  b.arrive(8, 2);
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0, 1});  // the third finds no seat
  CHECK(b.queues().waiting().size() == 1);
  const BatchPlan p = b.step();  // 0 finished with its first token: 2 takes its seat
  CHECK(ids(p) == std::vector<std::int64_t>{1, 2});
  CHECK(p.shape.decode_sequences == 1);
  CHECK(p.shape.prefill_sequences == 1);
}

TEST_CASE("orca admits while reservations fit, and then never preempts", "[scheduler]") {
  Bench b(std::make_unique<ReservingAllocator>(100), OrcaSchedulerOptions{256, 8192});
  b.arrive(20, 30);
  b.arrive(20, 30);
  b.arrive(10, 10);  // a region of 20 does not fit beside two of 50
  b.arrive(1, 1);    // would fit, but waits its turn
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0, 1});
  for (int i = 1; i < 30; ++i) {
    const BatchPlan p = b.step();
    CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
    CHECK(p.preempted.empty());
  }
  CHECK(b.queues().running().empty());
  CHECK(ids(b.step()) == std::vector<std::int64_t>{2, 3});
}

TEST_CASE("orca bounds the prompt tokens admitted in one iteration", "[scheduler]") {
  Bench b(paged(1024), OrcaSchedulerOptions{256, 50});
  b.arrive(30, 5);
  b.arrive(30, 5);
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0});
  const BatchPlan p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  CHECK(p.shape.prefill_tokens == 30);
}

TEST_CASE("orca on paged memory preempts the newest request by recompute", "[scheduler]") {
  Bench b(paged(64), OrcaSchedulerOptions{256, 8192});  // 4 blocks
  Request* a = b.arrive(32, 5);
  Request* c = b.arrive(32, 5);
  b.step();                // both prefilled: the cache is full
  BatchPlan p = b.step();  // a needs a third block: c goes, and nobody is admitted
  CHECK(ids(p) == std::vector<std::int64_t>{0});
  REQUIRE(p.preempted.size() == 1);
  CHECK(p.preempted[0] == c);
  CHECK(c->tokens() == 33);
  CHECK(b.queues().waiting().front() == c);
  for (int i = 0; i < 3; ++i)
    CHECK(ids(b.step()) == std::vector<std::int64_t>{0});  // c's 3 blocks are not free yet
  CHECK(a->finished());
  p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{1});
  CHECK(p.work[0].tokens == 33);  // prompt and generated token, recomputed
}

TEST_CASE("orca lets batches in flight complete before it preempts for memory", "[scheduler]") {
  Bench b(paged(64), OrcaSchedulerOptions{256, 32});  // 4 blocks; one prompt per iteration
  Request* a = b.arrive(32, 5);
  Request* c = b.arrive(32, 5);
  const BatchPlan first = b.launch();
  const BatchPlan second = b.launch();  // c fills the cache; both batches in flight
  b.complete(first);
  // a needs a third block; c holds the rest but is in flight, so a keeps its memory.
  BatchPlan p = b.launch();
  CHECK(p.empty());
  CHECK(p.preempted.empty());
  CHECK(a->computed_tokens == 32);
  b.complete(second);
  p = b.launch();  // now c is preemptible
  CHECK(ids(p) == std::vector<std::int64_t>{0});
  REQUIRE(p.preempted.size() == 1);
  CHECK(p.preempted[0] == c);
}

TEST_CASE("orca rejects what can never fit and bad options", "[scheduler]") {
  const OrcaScheduler scheduler(OrcaSchedulerOptions{256, 1000});
  const PagedAllocator allocator(640, 16);
  CHECK_FALSE(scheduler.reject_reason(RequestSpec{0, {}, 300, 300}, allocator).has_value());
  CHECK_THAT(scheduler.reject_reason(RequestSpec{1, {}, 600, 100}, allocator).value(),
             Catch::Contains("KV capacity"));
  CHECK(scheduler.reject_reason(RequestSpec{2, {}, 900, 200}, allocator)
            .value()
            .find("max_num_batched_tokens") != std::string::npos);
  CHECK_THROWS_WITH(OrcaScheduler(OrcaSchedulerOptions{0, 8192}),
                    Catch::Contains("scheduler.max_batch_size"));
  CHECK_THROWS_WITH(OrcaScheduler(OrcaSchedulerOptions{256, 0}),
                    Catch::Contains("scheduler.max_num_batched_tokens"));
  CHECK_THROWS_AS(OrcaScheduler(OrcaSchedulerOptions{0, 8192}), InputError);
}
