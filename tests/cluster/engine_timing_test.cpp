#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/impl/round_robin_router.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_v1_scheduler.h"
#include "tests/support/fakes.h"
#include "tests/support/scripted_source.h"

// How an engine's host side shapes a request's timing: planning each step while the one
// before runs (async scheduling) and the API server's latency outside the engine.

using namespace servesim;

namespace {

struct Setup {
  Setup(bool plan_ahead_ = false, double frontend_latency_s_ = 0, bool bulk_decode_ = true)
      : plan_ahead(plan_ahead_),
        frontend_latency_s(frontend_latency_s_),
        bulk_decode(bulk_decode_) {}
  bool plan_ahead;
  double frontend_latency_s;
  bool bulk_decode;
  VllmV1SchedulerOptions options{};
  test::FixedTimeModel model{0.010};  // every step 10 ms
  test::RecordingObserver recorder;

  ClusterRunStats run(std::vector<RequestSpec> requests) {
    test::ScriptedSource source(std::move(requests));
    std::vector<std::unique_ptr<Replica>> list;
    list.push_back(std::make_unique<Replica>(0, std::make_unique<PagedAllocator>(16000, 16, 0.0),
                                             std::make_unique<VllmV1Scheduler>(options), model, 1,
                                             4096, recorder, SwapLink{}, bulk_decode));
    if (plan_ahead) list.back()->plan_one_step_ahead();
    Cluster cluster(std::move(list), std::make_unique<RoundRobinRouter>(), source, recorder,
                    SimTime::duration_from_seconds(frontend_latency_s));
    return cluster.run();
  }
  const Request& finished(std::int64_t id) const {
    for (const Request& r : recorder.finished)
      if (r.spec.id == id) return r;
    FAIL("request " << id << " did not finish");
    return recorder.finished.front();
  }
};

RequestSpec at(double arrival_s, std::int64_t id, std::int64_t prompt, std::int64_t output) {
  return RequestSpec{id, SimTime::from_seconds(arrival_s), prompt, output};
}

double ttft_s(const Request& r) {
  return (r.first_token - r.spec.arrival).seconds();
}

// The end of the decode run in flight at `at_s`: its first iteration started by then and its
// last ends after.
double run_end_s(const test::RecordingObserver& recorder, double at_s) {
  for (const auto& [start_s, end_s] : recorder.runs)
    if (start_s <= at_s && at_s < end_s) return end_s;
  FAIL("no decode run was in flight at " << at_s << " s");
  return 0;
}

}  // namespace

TEST_CASE("planning ahead: a request arriving during step k first runs in step k + 2",
          "[cluster][engine_timing]") {
  // Request 0 decodes in steps [0, 10), [10, 20), [20, 30) ms, ...; request 1 arrives at 25 ms.
  for (const bool bulk : {true, false}) {
    INFO("bulk decode " << bulk);
    Setup now{false, 0, bulk};
    REQUIRE(now.run({at(0, 0, 16, 100), at(0.025, 1, 16, 5)}).finished == 2);
    CHECK(now.finished(1).first_scheduled.seconds() == Approx(0.030));
    CHECK(ttft_s(now.finished(1)) == Approx(0.015));

    Setup ahead{true, 0, bulk};
    REQUIRE(ahead.run({at(0, 0, 16, 100), at(0.025, 1, 16, 5)}).finished == 2);
    // The step from 30 ms was planned at 20 ms, before it arrived: it joins the one from 40.
    CHECK(ahead.finished(1).first_scheduled.seconds() == Approx(0.040));
    CHECK(ttft_s(ahead.finished(1)) == Approx(0.025));
    // The decodes themselves keep their pace.
    CHECK((ahead.finished(0).last_token - ahead.finished(0).first_token).seconds() ==
          Approx((now.finished(0).last_token - now.finished(0).first_token).seconds()));
    // An idle engine takes its first request at once.
    CHECK(ahead.finished(0).first_scheduled.seconds() == Approx(0));
  }
}

TEST_CASE("planning ahead: a decode run goes on through the step planned before an arrival",
          "[cluster][engine_timing][bulk]") {
  // As above: request 1 arrives at 25 ms, during the step from 20 ms, whose launch planned
  // the step from 30 ms without it. The run ends after that step, not before it (which
  // would launch the step from 30 ms alone), and request 1 joins the step from 40 ms.
  Setup ahead{true};
  REQUIRE(ahead.run({at(0, 0, 16, 100), at(0.025, 1, 16, 5)}).finished == 2);
  CHECK(run_end_s(ahead.recorder, 0.025) == Approx(0.040));
  CHECK(ahead.finished(1).first_scheduled.seconds() == Approx(0.040));
  // Without planning ahead, the run ends with the step in flight.
  Setup now{false};
  REQUIRE(now.run({at(0, 0, 16, 100), at(0.025, 1, 16, 5)}).finished == 2);
  CHECK(run_end_s(now.recorder, 0.025) == Approx(0.030));
}

TEST_CASE("a decode run goes on past a request that queues behind a waiting one",
          "[cluster][engine_timing][bulk]") {
  // One seat: request 0 decodes 100 tokens from 10 ms while request 1 waits for the seat.
  // Request 2, arriving at 25 ms, queues behind request 1, so no plan of the run changes.
  const std::vector<RequestSpec> requests{at(0, 0, 16, 100), at(0.001, 1, 16, 5),
                                          at(0.025, 2, 16, 5)};
  for (const bool plan_ahead : {false, true}) {
    INFO("planning ahead " << plan_ahead);
    Setup bulk{plan_ahead};
    Setup step{plan_ahead, 0, false};
    bulk.options.max_num_seqs = 1;
    step.options.max_num_seqs = 1;
    REQUIRE(bulk.run(requests).finished == 3);
    REQUIRE(step.run(requests).finished == 3);
    // The run in flight at 25 ms was not cut (a cut would end it at 30 or 40 ms): it
    // lasted to its limit or to request 0's end, its 100th token at 1 s.
    CHECK(run_end_s(bulk.recorder, 0.025) > 0.045);
    CHECK(step.recorder.runs.empty());
    REQUIRE(bulk.recorder.iterations.size() == step.recorder.iterations.size());
    for (const std::int64_t id : {0, 1, 2}) {
      INFO("request " << id);
      CHECK(bulk.finished(id).first_scheduled == step.finished(id).first_scheduled);
      CHECK(bulk.finished(id).last_token == step.finished(id).last_token);
    }
    // Request 2 is served after request 1, which waited for request 0 to finish.
    CHECK(bulk.finished(2).first_scheduled >= bulk.finished(1).last_token);
  }
}

TEST_CASE("planning ahead: with nothing else to plan, a newcomer runs in the next step",
          "[cluster][engine_timing]") {
  // Request 0 is done after its first step [0, 10) ms: at 10 ms there was nothing to plan
  // ahead, so request 1 (arrived at 5 ms) starts then, as without planning ahead.
  Setup ahead{true};
  REQUIRE(ahead.run({at(0, 0, 16, 1), at(0.005, 1, 16, 3)}).finished == 2);
  CHECK(ahead.finished(1).first_scheduled.seconds() == Approx(0.010));
  CHECK(ttft_s(ahead.finished(1)) == Approx(0.015));
}

TEST_CASE("the frontend latency adds once to TTFT and E2E, not to the gaps between tokens",
          "[cluster][engine_timing]") {
  Setup plain;
  Setup frontend{false, 0.004};
  const std::vector<RequestSpec> requests{at(1.0, 0, 16, 5), at(1.5, 1, 16, 5)};
  REQUIRE(plain.run(requests).finished == 2);
  REQUIRE(frontend.run(requests).finished == 2);
  for (std::int64_t id : {0, 1}) {
    INFO("request " << id);
    const Request& a = plain.finished(id);
    const Request& b = frontend.finished(id);
    CHECK(b.spec.arrival == a.spec.arrival);  // the client's send time
    CHECK((b.first_scheduled - a.first_scheduled) == SimTime::from_seconds(0.004));
    CHECK(ttft_s(b) == Approx(ttft_s(a) + 0.004));
    CHECK((b.last_token - b.spec.arrival).seconds() ==
          Approx((a.last_token - a.spec.arrival).seconds() + 0.004));
    CHECK((b.last_token - b.first_token) == (a.last_token - a.first_token));
  }
  CHECK(frontend.recorder.gap_sum_s == Approx(plain.recorder.gap_sum_s));
}
