#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/scheduler/impl/sarathi_scheduler.h"
#include "tests/support/scheduler_bench.h"

using namespace servesim;

namespace {

using test::ids;
using test::paged;
using test::ReservingAllocator;
using Bench = test::SchedulerBench<SarathiScheduler>;

}  // namespace

TEST_CASE("sarathi cuts a prompt into budget-sized chunks, and partial chunks do not sample",
          "[scheduler]") {
  Bench b(paged(1024), SarathiSchedulerOptions{8, 256});
  Request* r = b.arrive(20, 3);
  for (const std::int64_t chunk : {8, 8}) {
    const BatchPlan p = b.step();
    REQUIRE(p.work.size() == 1);
    CHECK(p.work[0].tokens == chunk);
    CHECK(p.shape.sampled_sequences == 0);
    CHECK(r->generated_tokens == 0);
  }
  const BatchPlan p = b.step();
  CHECK(p.work[0].tokens == 4);
  CHECK(p.shape.prefill_context_tokens == 20);  // the last chunk reads the 16 cached keys
  CHECK(p.shape.sampled_sequences == 1);
  CHECK(r->generated_tokens == 1);
  CHECK(b.step().shape.decode_context_tokens == 21);  // one decode: 20 cached + 1 fed
}

TEST_CASE("sarathi decodes first: a long prompt never stalls a running decode", "[scheduler]") {
  Bench b(paged(1024), SarathiSchedulerOptions{8, 256});
  Request* a = b.arrive(4, 10);
  b.step();
  Request* c = b.arrive(20, 2);
  for (const std::int64_t chunk : {7, 7, 6}) {
    const BatchPlan p = b.step();
    CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
    CHECK_FALSE(p.work[0].prefill);  // the decode was planned first, and ran
    CHECK(p.work[1].tokens == chunk);
    CHECK(p.shape.prefill_tokens + p.shape.decode_sequences <= 8);
  }
  CHECK(a->generated_tokens == 4);
  CHECK(c->generated_tokens == 1);
  CHECK(b.step().shape.decode_sequences == 2);
}

TEST_CASE("sarathi continues a partial prefill before admitting a new one", "[scheduler]") {
  Bench b(paged(1024), SarathiSchedulerOptions{8, 256});
  b.arrive(20, 5);
  Request* c = b.arrive(6, 5);
  b.step();
  b.step();
  BatchPlan p = b.step();  // the first prompt's last 4 tokens, then 4 of the second's 6
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  CHECK(p.work[0].tokens == 4);
  CHECK(p.work[1].tokens == 4);
  CHECK(p.shape.sampled_sequences == 1);  // the second's partial chunk samples nothing
  p = b.step();
  CHECK(p.shape.decode_sequences == 1);
  CHECK(p.shape.prefill_tokens == 2);
  CHECK(c->generated_tokens == 1);
}

TEST_CASE("sarathi admits up to max_num_seqs and skips requests in flight", "[scheduler]") {
  Bench seqs(paged(1024), SarathiSchedulerOptions{64, 2});
  for (int i = 0; i < 3; ++i)
    seqs.arrive(4, 5);
  CHECK(ids(seqs.step()) == std::vector<std::int64_t>{0, 1});  // the third finds no seat

  Bench pipeline(paged(1024), SarathiSchedulerOptions{8, 256});
  pipeline.arrive(20, 3);
  pipeline.arrive(4, 3);
  const BatchPlan first = pipeline.launch();  // 8 of the 20, still in the pipeline
  const BatchPlan second = pipeline.launch();
  CHECK(ids(second) == std::vector<std::int64_t>{1});
  pipeline.complete(first);
  pipeline.complete(second);
  CHECK(ids(pipeline.step()) == std::vector<std::int64_t>{1, 0});  // decode first
}

TEST_CASE("sarathi preemption by recompute re-prefills prompt and output in chunks",
          "[scheduler]") {
  Bench b(paged(64), SarathiSchedulerOptions{16, 256});  // 4 blocks
  Request* a = b.arrive(16, 20);
  Request* c = b.arrive(16, 20);
  CHECK(b.step().work[0].tokens == 16);
  BatchPlan p = b.step();  // a decodes; c gets the 15 tokens left
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  CHECK(p.work[1].tokens == 15);
  CHECK(b.step().work[1].tokens == 1);
  // Both decode until a needs a third block, with the cache full: c, the newest, goes.
  int iterations = 0;
  do {
    p = b.step();
  } while (p.preempted.empty() && ++iterations < 100);
  CHECK(p.preempted == std::vector<Request*>{c});
  CHECK(ids(p) == std::vector<std::int64_t>{0});
  CHECK(c->generated_tokens == 15);
  CHECK(c->tokens() == 31);
  std::vector<std::int64_t> chunks;
  while (c->generated_tokens == 15 && ++iterations < 100) {  // until its re-prefill samples
    for (const auto& w : b.step().work)
      if (w.request == c) chunks.push_back(w.tokens);
  }
  CHECK(a->finished());
  CHECK(chunks == std::vector<std::int64_t>{16, 15});
  CHECK(c->generated_tokens == 16);
}

TEST_CASE("sarathi serves a mix within the budget on paged and reserved memory", "[scheduler]") {
  const std::int64_t lengths[][2] = {{20, 5}, {3, 9}, {40, 2}, {7, 7}, {16, 16}, {1, 30}};
  for (const bool reserving : {false, true}) {
    Bench b(reserving ? std::make_unique<ReservingAllocator>(100) : paged(256),
            SarathiSchedulerOptions{8, 4});
    for (const auto& length : lengths)
      b.arrive(length[0], length[1]);
    for (int i = 0; i < 500 && !b.idle(); ++i) {
      const BatchPlan p = b.step();
      CHECK(p.shape.prefill_tokens + p.shape.decode_sequences <= 8);
      if (reserving) CHECK(p.preempted.empty());  // a region always covers the next chunk
    }
    for (const auto& r : b.requests)
      CHECK(r->finished());
  }
}

TEST_CASE("sarathi rejects only what can never fit, and bad options", "[scheduler]") {
  const SarathiScheduler scheduler(SarathiSchedulerOptions{8, 256});
  const PagedAllocator allocator(640, 16);
  CHECK_FALSE(scheduler.reject_reason(RequestSpec{0, {}, 600, 40}, allocator));  // no prompt limit
  CHECK_THAT(scheduler.reject_reason(RequestSpec{1, {}, 600, 100}, allocator).value(),
             Catch::Contains("KV capacity"));
  CHECK_THROWS_WITH(SarathiScheduler(SarathiSchedulerOptions{0, 256}),
                    Catch::Contains("scheduler.token_budget"));
  CHECK_THROWS_WITH(SarathiScheduler(SarathiSchedulerOptions{8, 0}),
                    Catch::Contains("scheduler.max_num_seqs"));
}

TEST_CASE("sarathi's batch waiting holds new prompts back for timeout plans while others decode",
          "[scheduler]") {
  // TensorRT-LLM's rule (PyExecutor._waiting_requests): timeout 3 plans, ratio 0.5 of 64.
  Bench b(paged(1024), SarathiSchedulerOptions{64, 256, 3, 0.5});
  b.arrive(4, 20);
  CHECK(b.step().shape.prefill_tokens == 4);  // nobody decodes yet: no waiting
  b.arrive(6, 5);
  // Plans with the decode and the waiting prompt: 1 + 6 = 7 tokens < 32, so the prompt waits
  // three plans, then the fourth admits it.
  for (int k = 0; k < 3; ++k) {
    const BatchPlan p = b.step();
    CHECK(p.shape.decode_sequences == 1);
    CHECK(p.shape.prefill_tokens == 0);
  }
  BatchPlan p = b.step();
  CHECK(p.shape.decode_sequences == 1);
  CHECK(p.shape.prefill_tokens == 6);
  // The count starts again: a third prompt waits three plans too.
  b.arrive(5, 5);
  for (int k = 0; k < 3; ++k)
    CHECK(b.step().shape.prefill_tokens == 0);
  CHECK(b.step().shape.prefill_tokens == 5);
}

TEST_CASE("sarathi's batch waiting ends as soon as the plan's tokens reach the ratio",
          "[scheduler]") {
  Bench b(paged(4096), SarathiSchedulerOptions{64, 256, 100, 0.5});
  b.arrive(4, 30);
  b.step();
  b.arrive(10, 5);
  CHECK(b.step().shape.prefill_tokens == 0);  // 1 + 10 = 11 tokens < 32
  b.arrive(10, 5);
  CHECK(b.step().shape.prefill_tokens == 0);  // 1 + 20 = 21 < 32
  b.arrive(12, 5);
  // 1 + 32 = 33 >= 32: all three prompts run together.
  const BatchPlan p = b.step();
  CHECK(p.shape.decode_sequences == 1);
  CHECK(p.shape.prefill_tokens == 32);
}

TEST_CASE("sarathi's batch waiting needs both terms: a zero one ends every wait at once",
          "[scheduler]") {
  // Ratio 0: every plan reaches 0 tokens; timeout 0: every count reaches 0 (as in TensorRT-LLM).
  for (const auto& options :
       {SarathiSchedulerOptions{64, 256, 5, 0.0}, SarathiSchedulerOptions{64, 256, 0, 0.9}}) {
    Bench b(paged(1024), options);
    b.arrive(4, 20);
    b.step();
    b.arrive(6, 5);
    CHECK(b.step().shape.prefill_tokens == 6);
  }
  CHECK(SarathiScheduler(SarathiSchedulerOptions{64, 256, 0, 0}).decode_plans_repeat());
  CHECK_FALSE(SarathiScheduler(SarathiSchedulerOptions{64, 256, 20, 0.9}).decode_plans_repeat());
  CHECK_THROWS_WITH(SarathiScheduler(SarathiSchedulerOptions{8, 256, -1, 0.5}),
                    Catch::Contains("scheduler.batch_wait_timeout_iters"));
  CHECK_THROWS_WITH(SarathiScheduler(SarathiSchedulerOptions{8, 256, 5, 1.5}),
                    Catch::Contains("scheduler.batch_wait_max_tokens_ratio"));
}
