// The order of same-time events, held by what a run does: at one instant, completed batches
// run first (they finish requests and free memory before anything is routed), then
// arrivals, then launches (a batch launched at an instant includes what arrived at it).
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/impl/least_kv_router.h"
#include "sim/cluster/impl/least_outstanding_router.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_scheduler.h"
#include "tests/support/fakes.h"
#include "tests/support/scripted_source.h"

using namespace servesim;

namespace {

// Replicas of vLLM on paged memory where every iteration takes exactly one second, so that
// batches complete at whole seconds, the instants requests are made to arrive at.
struct OneSecondIterations {
  test::FixedTimeModel model{1.0};
  test::RecordingObserver recorder;

  void run(std::vector<RequestSpec> requests, std::unique_ptr<IRouter> router,
           std::int32_t replicas) {
    test::ScriptedSource source(std::move(requests));
    std::vector<std::unique_ptr<Replica>> list;
    for (std::int32_t i = 0; i < replicas; ++i) {
      list.push_back(std::make_unique<Replica>(
          i, std::make_unique<PagedAllocator>(16000, 16, 0.0),
          std::make_unique<VllmScheduler>(VllmSchedulerOptions{}), model, 1, 4096, recorder));
    }
    Cluster cluster(std::move(list), std::move(router), source, recorder);
    const ClusterRunStats stats = cluster.run();
    REQUIRE(stats.finished == static_cast<std::int64_t>(recorder.finished.size()));
  }

  const Request& finished(std::int64_t id) const {
    for (const Request& r : recorder.finished) {
      if (r.spec.id == id) return r;
    }
    FAIL("request " << id << " did not finish");
    return recorder.finished.front();
  }
};

RequestSpec at(double arrival_s, std::int64_t id, std::int64_t prompt, std::int64_t output) {
  return RequestSpec{id, SimTime::from_seconds(arrival_s), prompt, output};
}

}  // namespace

TEST_CASE(
    "events at one instant: a completed batch finishes its requests before an arrival "
    "is routed",
    "[cluster][phase]") {
  OneSecondIterations s;
  // Request 0 goes to replica 0 and decodes on; request 1 to replica 1, where its prefill,
  // which produces its only token, ends at 1 s, the instant request 2 arrives. With request 1
  // already finished, replica 1 has fewer unfinished requests; otherwise a tie, which goes
  // to replica 0.
  s.run({at(0, 0, 10, 5), at(0, 1, 10, 1), at(1.0, 2, 10, 1)},
        std::make_unique<LeastOutstandingRouter>(), 2);
  CHECK(s.finished(0).replica == 0);
  CHECK(s.finished(1).replica == 1);
  CHECK(s.finished(1).last_token == SimTime::from_seconds(1.0));
  CHECK(s.finished(2).replica == 1);
  CHECK(s.finished(2).first_scheduled == SimTime::from_seconds(1.0));
}

TEST_CASE(
    "events at one instant: a completed batch frees its memory before an arrival is "
    "routed",
    "[cluster][phase]") {
  OneSecondIterations s;
  // Request 1 (100 prompt tokens, one output token) holds 7 blocks on replica 1 until its
  // prefill ends at 1 s; request 0 holds one block on replica 0. Request 2 arrives at 1 s:
  // with request 1's memory already freed replica 1 holds the least KV; before, replica 0.
  s.run({at(0, 0, 10, 5), at(0, 1, 100, 1), at(1.0, 2, 10, 1)}, std::make_unique<LeastKvRouter>(),
        2);
  CHECK(s.finished(0).replica == 0);
  CHECK(s.finished(1).replica == 1);
  CHECK(s.finished(2).replica == 1);
}

TEST_CASE("events at one instant: an arrival joins the batch launched at that instant",
          "[cluster][phase]") {
  OneSecondIterations s;
  SECTION("on an idle replica") {
    // Request 0's arrival asks for a launch at 0 s; request 1 arrives at 0 s too, later.
    s.run({at(0, 0, 10, 2), at(0, 1, 20, 2)}, std::make_unique<LeastOutstandingRouter>(), 1);
    REQUIRE(!s.recorder.iterations.empty());
    CHECK(s.recorder.iterations[0].batch_size == 2);
    CHECK(s.recorder.iterations[0].prefill_tokens == 30);
    CHECK(s.finished(1).first_scheduled == SimTime{});
  }
  SECTION("as a batch completes") {
    // Request 0's prefill ends at 1 s and asks for the next launch, then; request 1 arrives at
    // 1 s and is in it (vLLM runs an iteration that admits a prompt as prefills only).
    s.run({at(0, 0, 10, 3), at(1.0, 1, 20, 2)}, std::make_unique<LeastOutstandingRouter>(), 1);
    REQUIRE(s.recorder.iterations.size() >= 2);
    const IterationRecord& second = s.recorder.iterations[1];
    CHECK(second.start_s == Approx(1.0));
    CHECK(second.prefill_tokens == 20);
    CHECK(second.decode_tokens == 0);
    CHECK(s.finished(1).first_scheduled == SimTime::from_seconds(1.0));
  }
}
