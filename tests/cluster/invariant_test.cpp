#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/impl/round_robin_router.h"
#include "sim/core/error.h"
#include "sim/core/event_queue.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_scheduler.h"
#include "tests/support/fakes.h"
#include "tests/support/scripted_source.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A paged allocator whose usage report is broken in a chosen way.
class MisreportingAllocator final : public IKvCacheAllocator {
 public:
  enum class Fault { None, OverCapacity, LostSlots };
  explicit MisreportingAllocator(Fault fault) : fault_(fault) {}
  bool fits_when_empty(std::int64_t f) const override { return inner_.fits_when_empty(f); }
  bool can_admit(std::int64_t t, std::int64_t f) const override { return inner_.can_admit(t, f); }
  std::int64_t admit(std::int64_t s, std::int64_t t, std::int64_t f) override {
    return inner_.admit(s, t, f);
  }
  bool can_grow(std::int64_t s, std::int64_t t) const override { return inner_.can_grow(s, t); }
  void grow(std::int64_t s, std::int64_t t) override { inner_.grow(s, t); }
  void release(std::int64_t s) override { inner_.release(s); }
  KvUsage usage(std::int64_t next) const override {
    KvUsage u = inner_.usage(next);
    if (inner_.sequences() == 0) return u;
    if (fault_ == Fault::OverCapacity) {
      u.token_states += u.capacity_tokens;
      u.free = 0;
    }
    if (fault_ == Fault::LostSlots) u.free -= 16;
    return u;
  }
  std::int64_t capacity_tokens() const override { return inner_.capacity_tokens(); }
  std::int64_t sequences() const override { return inner_.sequences(); }

 private:
  PagedAllocator inner_{4096, 16, 0.0};
  Fault fault_;
};

// A vLLM scheduler with a broken promise or a broken plan.
class FaultyScheduler final : public IBatchScheduler {
 public:
  enum class Fault { TightBudget, NeverPlans, ThrowsUntimed };
  explicit FaultyScheduler(Fault fault) : fault_(fault) {}
  std::optional<std::string> reject_reason(const RequestSpec& r,
                                           const IKvCacheAllocator& a) const override {
    return inner_.reject_reason(r, a);
  }
  void enqueue(Request* request) override { inner_.enqueue(request); }
  void plan(IKvCacheAllocator& allocator, BatchPlan& plan) override {
    if (fault_ == Fault::NeverPlans) return;
    if (fault_ == Fault::ThrowsUntimed) throw InvariantError("blocks_conserved", "lost a block");
    inner_.plan(allocator, plan);
  }
  void retire(std::span<Request* const> finished) override { inner_.retire(finished); }
  const RequestQueues& queues() const override { return inner_.queues(); }
  BatchBudget budget() const override {
    BatchBudget b = inner_.budget();
    if (fault_ == Fault::TightBudget) b.sequences = 1;  // but plans two
    return b;
  }

 private:
  VllmScheduler inner_{VllmSchedulerOptions{}};
  Fault fault_;
};

// Runs two requests arriving at t = 1.5 s on one replica and returns the error message.
std::string violation(std::unique_ptr<IKvCacheAllocator> allocator,
                      std::unique_ptr<IBatchScheduler> scheduler) {
  const test::FixedTimeModel model(0.010);
  test::NullObserver observer;
  std::vector<std::unique_ptr<Replica>> replicas;
  replicas.push_back(std::make_unique<Replica>(0, std::move(allocator), std::move(scheduler), model,
                                               1, 4096, observer));
  test::ScriptedSource source(
      {{0, SimTime::from_seconds(1.5), 20, 4}, {1, SimTime::from_seconds(1.5), 20, 4}});
  Cluster cluster(std::move(replicas), std::make_unique<RoundRobinRouter>(), source, observer);
  try {
    cluster.run();
  } catch (const InvariantError& e) {
    CHECK(exit_code_for(e.kind()) == 5);
    return e.what();
  }
  FAIL("no invariant was violated");
  return {};
}

std::unique_ptr<IBatchScheduler> vllm() {
  return std::make_unique<VllmScheduler>(VllmSchedulerOptions{});
}

}  // namespace

TEST_CASE("invariant kv_within_capacity stops the run with its name and time", "[invariant]") {
  const auto message = violation(
      std::make_unique<MisreportingAllocator>(MisreportingAllocator::Fault::OverCapacity), vllm());
  CHECK_THAT(message, Contains("invariant kv_within_capacity violated at t=1.500000000 s"));
}

TEST_CASE("invariant blocks_conserved stops the run with its name and time", "[invariant]") {
  const auto message = violation(
      std::make_unique<MisreportingAllocator>(MisreportingAllocator::Fault::LostSlots), vllm());
  CHECK_THAT(message, Contains("invariant blocks_conserved violated at t=1.500000000 s"));
}

TEST_CASE("invariant batch_token_budget stops the run with its name and time", "[invariant]") {
  const auto message =
      violation(std::make_unique<MisreportingAllocator>(MisreportingAllocator::Fault::None),
                std::make_unique<FaultyScheduler>(FaultyScheduler::Fault::TightBudget));
  CHECK_THAT(message, Contains("invariant batch_token_budget violated at t=1.500000000 s"));
}

TEST_CASE("invariant requests_terminate stops the run with its name and time", "[invariant]") {
  const auto message =
      violation(std::make_unique<MisreportingAllocator>(MisreportingAllocator::Fault::None),
                std::make_unique<FaultyScheduler>(FaultyScheduler::Fault::NeverPlans));
  CHECK_THAT(message, Contains("invariant requests_terminate violated at t=1.500000000 s"));
  CHECK_THAT(message, Contains("2 requests unfinished"));
}

TEST_CASE("an invariant broken inside a policy is stamped with the simulated time", "[invariant]") {
  const auto message =
      violation(std::make_unique<MisreportingAllocator>(MisreportingAllocator::Fault::None),
                std::make_unique<FaultyScheduler>(FaultyScheduler::Fault::ThrowsUntimed));
  CHECK_THAT(message, Contains("invariant blocks_conserved violated at t=1.500000000 s: lost"));
}

TEST_CASE("invariant time_monotonic stops a queue asked to go back in time", "[invariant]") {
  EventQueue<int> queue;
  queue.push(SimTime::from_ns(2'000'000'000), 0, 1);
  queue.pop();
  try {
    queue.push(SimTime::from_ns(5), 0, 2);
    FAIL("an event in the past was accepted");
  } catch (const InvariantError& e) {
    CHECK(e.invariant() == "time_monotonic");
    CHECK_THAT(std::string(e.what()),
               Contains("invariant time_monotonic violated at t=2.000000000 s"));
  }
}
