#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/orca_scheduler.h"

using namespace servesim;

namespace {

// Contiguous allocation in miniature: admission reserves a region of final_tokens, and a
// sequence can never grow past its region.
class ReservingAllocator final : public IKvCacheAllocator {
 public:
  explicit ReservingAllocator(std::int64_t capacity_tokens) : capacity_(capacity_tokens) {}
  bool fits_when_empty(std::int64_t final_tokens) const override {
    return final_tokens <= capacity_;
  }
  bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const override {
    return tokens <= final_tokens && reserved_ + final_tokens <= capacity_;
  }
  void admit(std::int64_t sequence, std::int64_t tokens, std::int64_t final_tokens) override {
    if (!can_admit(tokens, final_tokens)) throw std::logic_error("admitted without room");
    regions_[sequence] = {tokens, final_tokens};
    reserved_ += final_tokens;
  }
  bool can_grow(std::int64_t sequence, std::int64_t tokens) const override {
    const auto& [held, size] = regions_.at(sequence);
    return held + tokens <= size;
  }
  void grow(std::int64_t sequence, std::int64_t tokens) override {
    if (!can_grow(sequence, tokens)) throw std::logic_error("grew past the region");
    regions_.at(sequence).first += tokens;
  }
  void release(std::int64_t sequence) override {
    reserved_ -= regions_.at(sequence).second;
    regions_.erase(sequence);
  }
  KvUsage usage(std::int64_t /*next_final_tokens*/) const override {
    KvUsage u{capacity_, 0, reserved_, 0, 0, capacity_ - reserved_};
    for (const auto& [sequence, region] : regions_)
      u.token_states += region.first;
    u.reserved -= u.token_states;
    return u;
  }
  std::int64_t capacity_tokens() const override { return capacity_; }
  std::int64_t sequences() const override { return static_cast<std::int64_t>(regions_.size()); }

 private:
  std::int64_t capacity_;
  std::int64_t reserved_ = 0;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> regions_;  // held, size
};

// A replica's bookkeeping without the clock: requests, queues, and the effect of a plan.
struct Bench {
  std::unique_ptr<IKvCacheAllocator> allocator;
  OrcaScheduler scheduler;
  RequestQueues queues;
  std::vector<std::unique_ptr<Request>> requests;

  Bench(std::unique_ptr<IKvCacheAllocator> kv, const OrcaSchedulerOptions& options)
      : allocator(std::move(kv)), scheduler(options) {}

  Request* arrive(std::int64_t prompt, std::int64_t output) {
    requests.push_back(std::make_unique<Request>());
    Request* r = requests.back().get();
    r->spec = RequestSpec{static_cast<std::int64_t>(requests.size()) - 1, {}, prompt, output};
    queues.waiting.push_back(r);
    return r;
  }

  BatchPlan launch() {
    BatchPlan plan = scheduler.plan(queues, *allocator);
    for (const auto& w : plan.work)
      w.request->in_flight = true;
    return plan;
  }

  // As Replica::complete: emit tokens, then retire finished requests.
  void complete(const BatchPlan& plan) {
    for (const auto& w : plan.work) {
      Request& r = *w.request;
      r.in_flight = false;
      r.kv_tokens += w.tokens;
      if (w.prefill && r.kv_tokens < r.prefill_target()) continue;
      r.prefilling = false;
      r.generated_tokens += 1;
    }
    std::erase_if(queues.running, [&](const Request* r) {
      if (!r->finished() || r->in_flight) return false;
      allocator->release(r->spec.id);
      return true;
    });
  }

  BatchPlan step() {
    BatchPlan plan = launch();
    complete(plan);
    return plan;
  }
};

std::unique_ptr<IKvCacheAllocator> paged(std::int64_t capacity_tokens) {
  return std::make_unique<PagedAllocator>(capacity_tokens, 16, 0.0);
}

std::vector<std::int64_t> ids(const BatchPlan& plan) {
  std::vector<std::int64_t> out;
  for (const auto& w : plan.work)
    out.push_back(w.request->spec.id);
  return out;
}

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
  CHECK(b.queues.waiting.size() == 1);
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
  CHECK(b.queues.running.empty());
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
  CHECK(c->prefill_target() == 33);
  CHECK(b.queues.waiting.front() == c);
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
  CHECK(a->kv_tokens == 32);
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
