#include <catch2/catch.hpp>

#include "tests/support/test_support.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/impl/prefix_aware_router.h"
#include "sim/cluster/impl/round_robin_router.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_v1_scheduler.h"
#include "tests/support/fakes.h"

using namespace servesim;

namespace {

using test::FixedTimeModel;
using Recorder = test::RecordingObserver;

// A workload that hands out fixed requests and says what each is made of.
class ContentSource final : public IWorkloadSource {
 public:
  ContentSource(std::vector<RequestSpec> requests, std::vector<TokenContent> contents)
      : requests_(std::move(requests)), contents_(std::move(contents)) {}
  std::optional<RequestSpec> next() override {
    if (next_ == requests_.size()) return std::nullopt;
    last_ =
        contents_[next_].empty() ? nullptr : std::make_shared<const TokenContent>(contents_[next_]);
    return requests_[next_++];
  }
  bool exhausted() const override { return next_ == requests_.size(); }
  std::shared_ptr<const TokenContent> last_content() const override { return last_; }

 private:
  std::vector<RequestSpec> requests_;
  std::vector<TokenContent> contents_;
  std::size_t next_ = 0;
  std::shared_ptr<const TokenContent> last_;
};

struct Run {
  Recorder recorder;
  ClusterRunStats stats;
};

std::unique_ptr<Run> serve(std::vector<RequestSpec> requests, std::vector<TokenContent> contents,
                           bool prefix_caching, bool bulk_decode = true,
                           std::int64_t capacity_tokens = 64000,
                           std::unique_ptr<IRouter> router = nullptr, std::int32_t replicas = 1) {
  auto run = std::make_unique<Run>();
  const FixedTimeModel model(0.010, 0.001);
  ContentSource source(std::move(requests), std::move(contents));
  std::vector<std::unique_ptr<Replica>> list;
  for (std::int32_t i = 0; i < replicas; ++i) {
    list.push_back(std::make_unique<Replica>(
        i, std::make_unique<PagedAllocator>(capacity_tokens, 16, 0.0, prefix_caching),
        std::make_unique<VllmV1Scheduler>(VllmV1SchedulerOptions{}), model, 1, 8192, run->recorder,
        SwapLink{}, bulk_decode));
  }
  if (!router) router = std::make_unique<RoundRobinRouter>();
  Cluster cluster(std::move(list), std::move(router), source, run->recorder);
  run->stats = cluster.run();
  return run;
}

RequestSpec at(double arrival_s, std::int64_t id, std::int64_t prompt, std::int64_t output) {
  return RequestSpec{id, SimTime::from_seconds(arrival_s), prompt, output};
}

// `n` requests a second apart (each done before the next arrives), each a system prompt of
// `system` tokens and 40 of its own.
void shared_prompt(std::int64_t n, std::int64_t system, double spacing_s,
                   std::vector<RequestSpec>& requests, std::vector<TokenContent>& contents) {
  for (std::int64_t id = 0; id < n; ++id) {
    requests.push_back(at(spacing_s * static_cast<double>(id), id, system + 40, 20));
    contents.push_back({{42, system}, {1000 + static_cast<std::uint64_t>(id), 40}});
  }
}

const Request& finished(const Run& run, std::int64_t id) {
  for (const Request& r : run.recorder.finished) {
    if (r.spec.id == id) return r;
  }
  FAIL("request " << id << " did not finish");
  return run.recorder.finished.front();
}

}  // namespace

TEST_CASE("a shared system prompt: every request but the first hits the prompt's full blocks",
          "[cluster][prefix]") {
  std::vector<RequestSpec> requests;
  std::vector<TokenContent> contents;
  shared_prompt(6, 200, 1.0, requests, contents);
  const auto run = serve(requests, contents, true);
  REQUIRE(run->stats.finished == 6);
  CHECK(finished(*run, 0).cached_prompt_tokens == 0);
  for (std::int64_t id = 1; id < 6; ++id)
    CHECK(finished(*run, id).cached_prompt_tokens == 192);  // 12 full blocks of 16
  // Each later request's first iteration computes only the uncached 48 tokens, and the
  // iteration reports the hit.
  std::int64_t hit_iterations = 0;
  for (const IterationRecord& it : run->recorder.iterations) {
    if (it.cached_tokens == 0) continue;
    ++hit_iterations;
    CHECK(it.cached_tokens == 192);
    CHECK(it.prefill_tokens == 48);
  }
  CHECK(hit_iterations == 5);
  // TTFT falls with the hit (48 prompt tokens computed instead of 240).
  const Request& first = finished(*run, 0);
  const Request& second = finished(*run, 1);
  CHECK((first.first_token - first.spec.arrival).seconds() == Approx(0.010 + 0.240));
  CHECK((second.first_token - second.spec.arrival).seconds() == Approx(0.010 + 0.048));

  const auto off = serve(requests, contents, false);
  for (const Request& r : off->recorder.finished)
    CHECK(r.cached_prompt_tokens == 0);
}

TEST_CASE("requests admitted together hit nothing: only computed blocks are cached",
          "[cluster][prefix]") {
  std::vector<RequestSpec> requests;
  std::vector<TokenContent> contents;
  shared_prompt(4, 200, 0.0, requests, contents);  // all at once: admitted in one step
  requests.push_back(at(5.0, 4, 240, 20));         // later: the blocks are computed
  contents.push_back({{42, 200}, {9999, 40}});
  const auto run = serve(requests, contents, true);
  REQUIRE(run->stats.finished == 5);
  for (std::int64_t id = 0; id < 4; ++id)
    CHECK(finished(*run, id).cached_prompt_tokens == 0);
  CHECK(finished(*run, 4).cached_prompt_tokens == 192);
}

TEST_CASE("prefix caching: bulk decoding equals one iteration at a time, and runs repeat",
          "[cluster][prefix]") {
  std::vector<RequestSpec> requests;
  std::vector<TokenContent> contents;
  for (std::int64_t id = 0; id < 40; ++id) {
    requests.push_back(at(0.05 * static_cast<double>(id), id, 100 + 7 * (id % 5), 30 + id % 13));
    // Half of them name their content (two system prompts), half do not.
    if (id % 2 == 0) {
      contents.push_back({{static_cast<std::uint64_t>(id % 4), 64 + 10 * (id % 3)},
                          {5000 + static_cast<std::uint64_t>(id), 200}});
    } else {
      contents.emplace_back();
    }
  }
  // A cache small enough to preempt.
  const auto bulk = serve(requests, contents, true, true, 2400);
  const auto plain = serve(requests, contents, true, false, 2400);
  const auto again = serve(requests, contents, true, true, 2400);
  REQUIRE(bulk->stats.finished == 40);
  REQUIRE(bulk->recorder.iterations.size() == plain->recorder.iterations.size());
  std::int64_t hits = 0;
  for (std::size_t i = 0; i < bulk->recorder.iterations.size(); ++i) {
    const IterationRecord& a = bulk->recorder.iterations[i];
    const IterationRecord& b = plain->recorder.iterations[i];
    const IterationRecord& c = again->recorder.iterations[i];
    REQUIRE(a.start_s == b.start_s);
    REQUIRE(a.duration_s == b.duration_s);
    REQUIRE(a.cached_tokens == b.cached_tokens);
    REQUIRE(a.kv_memory.cached == b.kv_memory.cached);
    REQUIRE(a.kv_memory.free == b.kv_memory.free);
    REQUIRE(a.kv_memory.token_states == b.kv_memory.token_states);
    REQUIRE(a.start_s == c.start_s);  // deterministic
    REQUIRE(a.kv_memory.cached == c.kv_memory.cached);
    hits += a.cached_tokens;
  }
  CHECK(hits > 0);
  std::int64_t preemptions = 0;
  for (const Request& r : bulk->recorder.finished)
    preemptions += r.preemptions;
  CHECK(preemptions > 0);
}

TEST_CASE("prefix caching with no content changes nothing", "[cluster][prefix]") {
  std::vector<RequestSpec> requests;
  std::vector<TokenContent> contents(30);
  for (std::int64_t id = 0; id < 30; ++id)
    requests.push_back(at(0.02 * static_cast<double>(id), id, 90 + id % 7, 25 + id % 11));
  const auto on = serve(requests, contents, true, true, 1600);
  const auto off = serve(requests, contents, false, true, 1600);
  REQUIRE(on->recorder.iterations.size() == off->recorder.iterations.size());
  for (std::size_t i = 0; i < on->recorder.iterations.size(); ++i) {
    const IterationRecord& a = on->recorder.iterations[i];
    const IterationRecord& b = off->recorder.iterations[i];
    REQUIRE(a.start_s == b.start_s);
    REQUIRE(a.kv_memory.token_states == b.kv_memory.token_states);
    REQUIRE(a.kv_memory.free == b.kv_memory.free);
    REQUIRE(a.kv_memory.cached == 0);
    REQUIRE(a.cached_tokens == 0);
  }
}

TEST_CASE("the prefix-aware router weighs the cached share of the prompt against load",
          "[cluster][prefix]") {
  PrefixAwareRouter router;
  std::vector<ReplicaView> views(2);
  views[0].replica = 0;
  views[1].replica = 1;
  views[0].outstanding_requests = 2;
  views[1].outstanding_requests = 1;
  const RequestSpec request = at(0.0, 0, 240, 10);
  // No hit anywhere: the less loaded replica.
  CHECK(router.route(request, views) == 1);
  // 192 of 240 tokens cached on the busier one: 2 x 0.8 - 1 > 0 - 0.5.
  views[0].cached_prefix_tokens = 192;
  CHECK(router.route(request, views) == 0);
  // A small hit does not outweigh the load: 2 x 0.2 - 1 < -0.5.
  views[0].cached_prefix_tokens = 48;
  CHECK(router.route(request, views) == 1);
  CHECK(router.reads_prefixes());
  CHECK_FALSE(router.reads_kv_memory());
  // Weighted otherwise: the same small hit wins at 10 x 0.2 - 1 > -0.5, and with no weight
  // on the prefix the load alone decides even against a large hit.
  CHECK(PrefixAwareRouter({10.0, 1.0}).route(request, views) == 0);
  views[0].cached_prefix_tokens = 192;
  CHECK(PrefixAwareRouter({0.0, 1.0}).route(request, views) == 1);
}

TEST_CASE("the routing section sets the prefix-aware router's weights, and only its",
          "[cluster][prefix][cli]") {
  const test::ScratchDir dir("routing_weights");
  const auto out = dir.path() / "out";
  const auto resolved = test::run_servesim(
      {"run", "--num-requests", "20", "--replicas", "2", "--router", "prefix_aware", "--set",
       "routing.prefix_weight=5", "--no-plots", "--out", out.string()});
  INFO(resolved.err);
  REQUIRE(resolved.exit_code == 0);
  const auto config = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
  CHECK(config["routing"]["prefix_weight"] == 5.0);
  CHECK(config["routing"]["load_weight"] == 1.0);
  test::require_error(
      test::run_servesim({"run", "--num-requests", "20", "--set", "routing.prefix_weight=5"}), 3,
      "routing");
  test::require_error(test::run_servesim({"run", "--num-requests", "20", "--router", "prefix_aware",
                                          "--set", "routing.load_weight=-1"}),
                      3, "routing.load_weight");
}

TEST_CASE("routed by cached prefix, a shared system prompt hits on every request but the first",
          "[cluster][prefix]") {
  std::vector<RequestSpec> requests;
  std::vector<TokenContent> contents;
  shared_prompt(6, 200, 1.0, requests, contents);
  const auto aware =
      serve(requests, contents, true, true, 64000, std::make_unique<PrefixAwareRouter>(), 2);
  const auto rotating = serve(requests, contents, true, true, 64000, nullptr, 2);
  std::int64_t aware_hits = 0;
  std::int64_t rotating_hits = 0;
  for (const Request& r : aware->recorder.finished)
    aware_hits += r.cached_prompt_tokens;
  for (const Request& r : rotating->recorder.finished)
    rotating_hits += r.cached_prompt_tokens;
  CHECK(aware_hits == 5 * 192);
  CHECK(rotating_hits == 4 * 192);  // each replica's first request misses
}

TEST_CASE("a host tier's hit is loaded over the host link instead of recomputed",
          "[cluster][prefix]") {
  // 20 GPU blocks: a request without content in between evicts the system prompt to the
  // host tier, from which the third request loads its 12 blocks at 1,000 tokens/s.
  const std::vector<RequestSpec> requests{at(0.0, 0, 240, 20), at(1.0, 1, 310, 5),
                                          at(2.0, 2, 240, 20)};
  const std::vector<TokenContent> contents{{{42, 200}, {1000, 40}}, {}, {{42, 200}, {1002, 40}}};
  const auto ttft_of_third = [&](std::int64_t host_blocks) {
    Recorder recorder;
    const FixedTimeModel model(0.010, 0.001);
    ContentSource source(requests, contents);
    std::vector<std::unique_ptr<Replica>> list;
    list.push_back(std::make_unique<Replica>(
        0, std::make_unique<PagedAllocator>(320, 16, 0.0, true, host_blocks),
        std::make_unique<VllmV1Scheduler>(VllmV1SchedulerOptions{}), model, 1, 8192, recorder,
        SwapLink{1.0, 1000.0}));
    Cluster cluster(std::move(list), std::make_unique<RoundRobinRouter>(), source, recorder);
    REQUIRE(cluster.run().finished == 3);
    for (const Request& r : recorder.finished) {
      if (r.spec.id != 2) continue;
      CHECK(r.cached_prompt_tokens == (host_blocks > 0 ? 192 : 0));
      CHECK(r.host_cached_prompt_tokens == r.cached_prompt_tokens);
      return (r.first_token - r.spec.arrival).seconds();
    }
    FAIL("request 2 did not finish");
    return 0.0;
  };
  CHECK(ttft_of_third(0) == Approx(0.010 + 0.240));
  CHECK(ttft_of_third(20) == Approx(0.010 + 0.048 + 0.192));
}
