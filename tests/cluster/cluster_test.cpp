#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/impl/round_robin_router.h"
#include "sim/cluster/max_len_admission.h"
#include "sim/cluster/request_pool.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_scheduler.h"
#include "tests/support/fakes.h"
#include "tests/support/scripted_source.h"

using namespace servesim;

namespace {

using test::FixedTimeModel;
using Recorder = test::RecordingObserver;

struct Setup {
  FixedTimeModel model;
  Recorder recorder;
  std::int64_t capacity_tokens;
  std::int64_t pipeline = 1;
  std::int64_t max_len = 4096;
  MaxLenPolicy max_len_policy = MaxLenPolicy::Cut;

  ClusterRunStats run(std::vector<RequestSpec> requests, std::int64_t replicas = 1) {
    test::ScriptedSource source(std::move(requests));
    std::vector<std::unique_ptr<Replica>> list;
    for (std::int32_t i = 0; i < replicas; ++i) {
      list.push_back(
          std::make_unique<Replica>(i, std::make_unique<PagedAllocator>(capacity_tokens, 16, 0.0),
                                    std::make_unique<VllmScheduler>(VllmSchedulerOptions{}), model,
                                    pipeline, max_len, recorder, SwapLink{}, true, max_len_policy));
    }
    Cluster cluster(std::move(list), std::make_unique<RoundRobinRouter>(), source, recorder);
    return cluster.run();
  }
};

RequestSpec at(double arrival_s, std::int64_t id, std::int64_t prompt, std::int64_t output) {
  return RequestSpec{id, SimTime::from_seconds(arrival_s), prompt, output};
}

}  // namespace

TEST_CASE("one request on an idle replica: TTFT is the prefill, then one step per token",
          "[cluster]") {
  Setup s{FixedTimeModel(0.010, 0.001), {}, 16000};
  const auto stats = s.run({at(1.0, 0, 100, 5)});
  REQUIRE(stats.finished == 1);
  const Request& r = s.recorder.finished.at(0);
  CHECK(r.first_scheduled.seconds() == Approx(1.0));
  CHECK((r.first_token - r.spec.arrival).seconds() == Approx(0.010 + 0.100));
  CHECK((r.last_token - r.first_token).seconds() == Approx(4 * 0.010));
  CHECK(s.recorder.gaps == 4);
  CHECK(s.recorder.gap_sum_s == Approx(0.040));
  CHECK(s.recorder.iterations.size() == 5);
  CHECK(s.recorder.iterations[0].prefill_tokens == 100);
  CHECK(s.recorder.iterations[1].decode_tokens == 1);
  CHECK(stats.end_time.seconds() == Approx(1.150));
}

TEST_CASE("a replica with KV room for exactly N requests admits N and queues the next",
          "[cluster]") {
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 4; ++i)
    requests.push_back(at(0.0, i, 64, 1));
  Setup tight{FixedTimeModel(0.001, 0.0), {}, 3 * 64};  // room for exactly three prompts
  const auto stats = tight.run(requests);
  CHECK(stats.finished == 4);
  REQUIRE(tight.recorder.iterations.size() >= 2);
  CHECK(tight.recorder.iterations.at(0).batch_size == 3);
  CHECK(tight.recorder.iterations.at(1).batch_size == 1);
  CHECK(tight.recorder.finished.at(3).first_scheduled.seconds() == Approx(0.001));
}

TEST_CASE("requests that can never fit are rejected and reported, the rest complete", "[cluster]") {
  Setup s{FixedTimeModel(0.001, 0.0), {}, 256};
  const auto stats = s.run({at(0, 0, 100, 10), at(0, 1, 300, 10), at(0.5, 2, 10, 10)});
  CHECK(stats.arrived == 3);
  CHECK(stats.finished == 2);
  CHECK(stats.rejected == 1);
  REQUIRE(s.recorder.rejected.size() == 1);
  CHECK(s.recorder.rejected[0].find("KV capacity") != std::string::npos);
}

namespace {

// Prompts and outputs around a max_len of 1,024 tokens.
std::vector<RequestSpec> around_max_len() {
  return {at(0, 0, 100, 50),   // fits
          at(0, 1, 900, 200),  // passes max_len: cut to 124 output tokens
          at(0, 2, 1000, 30),  // cut to 24
          at(0, 3, 1024, 5),   // a prompt of max_len: no room for an output token
          at(0, 4, 1500, 10),  // a prompt over max_len
          at(0, 5, 1023, 1)};  // exactly max_len
}

}  // namespace

TEST_CASE("max_len cut: outputs stop at max_len, prompts of max_len or more are rejected",
          "[cluster][max_len]") {
  Setup s{FixedTimeModel(0.001, 0.0), {}, 16000};
  s.max_len = 1024;
  const auto stats = s.run(around_max_len());
  CHECK(stats.finished == 4);
  CHECK(stats.rejected == 2);
  REQUIRE(s.recorder.rejected.size() == 2);
  for (const auto& reason : s.recorder.rejected) {
    CHECK_THAT(reason, Catch::Contains("leave no room for an output token within the maximum "
                                       "sequence length (1024)"));
  }
  REQUIRE(s.recorder.finished.size() == 4);
  for (const Request& r : s.recorder.finished) {
    INFO("request " << r.spec.id);
    CHECK(r.generated_tokens == r.spec.output_tokens);
    if (r.spec.id == 1 || r.spec.id == 2) {
      // Cut: it ends with exactly max_len tokens, and keeps what it asked for.
      CHECK(r.tokens() == 1024);
      CHECK(r.requested_output_tokens == (r.spec.id == 1 ? 200 : 30));
      CHECK(r.cut_output_tokens() == (r.spec.id == 1 ? 76 : 6));
    } else {
      CHECK(r.cut_output_tokens() == 0);
      CHECK(r.requested_output_tokens == r.spec.output_tokens);
    }
  }
}

TEST_CASE("max_len reject: a request passing max_len is rejected whole", "[cluster][max_len]") {
  Setup s{FixedTimeModel(0.001, 0.0), {}, 16000};
  s.max_len = 1024;
  s.max_len_policy = MaxLenPolicy::Reject;
  const auto stats = s.run(around_max_len());
  CHECK(stats.finished == 2);
  CHECK(stats.rejected == 4);
  std::int64_t over = 0, no_room = 0;
  for (const auto& reason : s.recorder.rejected) {
    if (reason.find("exceed the maximum sequence length (1024)") != std::string::npos) ++over;
    if (reason.find("leave no room for an output token") != std::string::npos) ++no_room;
  }
  CHECK(over == 2);
  CHECK(no_room == 2);
  for (const Request& r : s.recorder.finished)
    CHECK(r.cut_output_tokens() == 0);
}

TEST_CASE("max_len cut: a request whose cut length still exceeds the KV capacity is rejected",
          "[cluster][max_len]") {
  // 600 + 600 is cut to 600 + 424 = 1,024 tokens: more than a cache of 512 holds, and within
  // one of 1,104, which the whole 1,200 tokens would not have fitted.
  Setup small{FixedTimeModel(0.001, 0.0), {}, 512};
  small.max_len = 1024;
  const auto stats = small.run({at(0, 0, 600, 600), at(0, 1, 200, 100)});
  CHECK(stats.finished == 1);
  REQUIRE(small.recorder.rejected.size() == 1);
  CHECK_THAT(small.recorder.rejected[0],
             Catch::Contains("prompt + output tokens (1024) exceed the replica's KV capacity"));

  Setup large{FixedTimeModel(0.001, 0.0), {}, 1104};
  large.max_len = 1024;
  CHECK(large.run({at(0, 0, 600, 600)}).finished == 1);
  REQUIRE(large.recorder.finished.size() == 1);
  CHECK(large.recorder.finished[0].tokens() == 1024);
  CHECK(large.recorder.finished[0].cut_output_tokens() == 176);
}

TEST_CASE("max_len admission: each policy's decision and reason", "[cluster][max_len]") {
  const RequestSpec fits{0, {}, 100, 50};
  const RequestSpec passes{1, {}, 900, 200};
  for (const MaxLenPolicy policy : {MaxLenPolicy::Cut, MaxLenPolicy::Reject}) {
    const LengthAdmission a = admit_within_max_len(fits, 1024, policy);
    CHECK_FALSE(a.reject_reason);
    CHECK(a.served.output_tokens == 50);
    CHECK(admit_within_max_len(RequestSpec{2, {}, 1024, 1}, 1024, policy).reject_reason);
    CHECK_FALSE(admit_within_max_len(RequestSpec{3, {}, 1023, 1}, 1024, policy).reject_reason);
  }
  const LengthAdmission cut = admit_within_max_len(passes, 1024, MaxLenPolicy::Cut);
  CHECK_FALSE(cut.reject_reason);
  CHECK(cut.served.output_tokens == 124);
  CHECK(cut.served.prompt_tokens == 900);
  CHECK(cut.served.id == 1);
  const LengthAdmission rejected = admit_within_max_len(passes, 1024, MaxLenPolicy::Reject);
  CHECK(rejected.reject_reason.value() ==
        "prompt + output tokens (1100) exceed the maximum sequence length (1024)");
  CHECK(parse_max_len_policy("cut", "max_len_policy") == MaxLenPolicy::Cut);
  CHECK(parse_max_len_policy("reject", "max_len_policy") == MaxLenPolicy::Reject);
  CHECK_THROWS_WITH(parse_max_len_policy("truncate", "max_len_policy"),
                    Catch::Contains("max_len_policy: unknown max_len policy \"truncate\" "
                                    "(valid: cut, reject)"));
}

TEST_CASE("memory pressure preempts, and every preempted request still finishes", "[cluster]") {
  Setup s{FixedTimeModel(0.002, 0.00001), {}, 1024};
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 40; ++i)
    requests.push_back(at(0.001 * i, i, 100, 200));
  const auto stats = s.run(requests);
  CHECK(stats.finished == 40);
  std::int64_t preemptions = 0;
  for (const auto& r : s.recorder.finished) {
    preemptions += r.preemptions;
    CHECK(r.generated_tokens == 200);
  }
  CHECK(preemptions > 0);
  for (const auto& i : s.recorder.iterations)
    CHECK(i.kv_used_tokens <= i.kv_capacity_tokens);
}

TEST_CASE("round robin spreads requests over replicas", "[cluster]") {
  Setup s{FixedTimeModel(0.001, 0.0), {}, 16000};
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 6; ++i)
    requests.push_back(at(0, i, 10, 3));
  s.run(requests, 3);
  std::vector<int> per_replica(3, 0);
  for (const auto& r : s.recorder.finished)
    per_replica[static_cast<std::size_t>(r.replica)]++;
  CHECK(per_replica == std::vector<int>{2, 2, 2});
}

TEST_CASE("pipeline stages overlap batches of different requests", "[cluster]") {
  // Stage time 5 ms, two stages: a batch takes 10 ms, and the first stage takes the next
  // batch (of requests not already in flight) after 5 ms.
  Setup two{FixedTimeModel(0.005, 0.0), {}, 16000, 2};
  const auto stats = two.run({at(0, 0, 10, 3), at(0.001, 1, 10, 3)});
  CHECK(stats.finished == 2);
  const auto& it = two.recorder.iterations;
  REQUIRE(it.size() >= 3);
  CHECK(it[0].duration_s == Approx(0.010));
  CHECK(it[1].start_s == Approx(0.005));  // request 1's prefill overlaps request 0's batch
  CHECK(it[2].start_s == Approx(0.010));  // request 0 decodes once its batch is out
  CHECK(two.recorder.finished.at(0).first_token.seconds() == Approx(0.010));
  CHECK(two.recorder.finished.at(1).first_token.seconds() == Approx(0.015));
}

TEST_CASE("swapping takes the time the host link implies", "[cluster]") {
  FixedTimeModel model(0.001, 0.0);
  Recorder recorder;
  // Room for two 32-token prompts; each then needs a third block, so one is swapped out.
  const SwapLink link{2000.0, 1e6};  // 2,000 B per token at 1 MB/s: 2 ms per token
  std::vector<std::unique_ptr<Replica>> list;
  list.push_back(
      std::make_unique<Replica>(0, std::make_unique<PagedAllocator>(64, 16, 0.0),
                                std::make_unique<VllmScheduler>(VllmSchedulerOptions{}, 1000),
                                model, 1, 4096, recorder, link));
  test::ScriptedSource source({at(0, 0, 32, 4), at(0, 1, 32, 4)});
  Cluster cluster(std::move(list), std::make_unique<RoundRobinRouter>(), source, recorder);
  const auto stats = cluster.run();
  CHECK(stats.finished == 2);
  REQUIRE(recorder.iterations.size() >= 3);
  CHECK(recorder.iterations[0].duration_s == Approx(0.001));  // both prefills
  CHECK(recorder.iterations[1].preempted == 1);               // 32 tokens out
  CHECK(recorder.iterations[1].duration_s == Approx(0.001 + 32 * 0.002));
  bool swapped_back = false;
  for (const auto& it : recorder.iterations) {
    if (it.start_s > recorder.iterations[1].start_s && it.duration_s > 0.05) swapped_back = true;
  }
  CHECK(swapped_back);  // the copy back costs the same 64 ms
  CHECK(recorder.finished.at(1).preemptions == 1);
}

TEST_CASE("the request pool hands out fresh, distinct slots and reuses released ones",
          "[cluster]") {
  RequestPool pool;
  std::vector<Request*> held;
  std::set<Request*> distinct;
  // Past one chunk of slots: every slot distinct, fresh, and where it was handed out.
  for (std::int64_t id = 0; id < 2500; ++id) {
    Request* r = pool.acquire();
    CHECK(r->spec.id == 0);
    CHECK(r->generated_tokens == 0);
    CHECK(reinterpret_cast<std::uintptr_t>(r) % alignof(Request) == 0);
    r->spec.id = id;
    r->generated_tokens = 7;
    held.push_back(r);
    distinct.insert(r);
  }
  CHECK(distinct.size() == 2500);
  CHECK(pool.live() == 2500);
  for (std::size_t i = 0; i < held.size(); ++i)
    CHECK(held[i]->spec.id == static_cast<std::int64_t>(i));
  // A released slot serves the next request, reset.
  pool.release(held[42]);
  CHECK(pool.live() == 2499);
  Request* again = pool.acquire();
  CHECK(again == held[42]);
  CHECK(again->spec.id == 0);
  CHECK(again->generated_tokens == 0);
}
