#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/static_scheduler.h"

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
  StaticScheduler scheduler;
  RequestQueues queues;
  std::vector<std::unique_ptr<Request>> requests;

  Bench(std::unique_ptr<IKvCacheAllocator> kv, std::int64_t batch_size)
      : allocator(std::move(kv)), scheduler(StaticSchedulerOptions{batch_size}) {}

  Request* arrive(std::int64_t prompt, std::int64_t output) {
    requests.push_back(std::make_unique<Request>());
    Request* r = requests.back().get();
    r->spec = RequestSpec{static_cast<std::int64_t>(requests.size()) - 1, {}, prompt, output};
    queues.waiting.push_back(r);
    return r;
  }
  bool idle() const { return queues.running.empty() && queues.waiting.empty(); }

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
  CHECK(b.queues.waiting.size() == 1);
  p = b.step();  // both decode; a finishes
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  CHECK(p.shape.decode_sequences == 2);
  CHECK(a->finished());
  for (int i = 0; i < 2; ++i) {  // c alone, its free seat not refilled
    p = b.step();
    CHECK(ids(p) == std::vector<std::int64_t>{1});
    CHECK(b.queues.waiting.size() == 1);
  }
  CHECK(c->finished());
  CHECK(b.queues.running.empty());
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
  CHECK(b.queues.running.empty());
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
