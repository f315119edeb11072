// What a router sees of a replica (ReplicaView) agrees with the replica's requests and its
// allocator after every step: waiting, running and swapped requests, the tokens the waiting
// ones would compute, and the KV memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "sim/cluster/replica.h"
#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/impl/vllm_scheduler.h"
#include "tests/support/fakes.h"
#include "tests/support/requests.h"

using namespace servesim;

namespace {

// The view as the requests' own states and the allocator's blocks say it should be.
void check_view(const Replica& replica, const PagedAllocator& blocks,
                const test::RequestArena& arena, std::int64_t requests) {
  ReplicaView expected;
  for (std::int64_t id = 0; id < requests; ++id) {
    const Request& r = *arena.request(id);
    switch (r.state) {
      case RequestState::Waiting:
      case RequestState::Preempted:
        ++expected.waiting_requests;
        expected.waiting_tokens += r.uncomputed_tokens();
        break;
      case RequestState::Running:
        ++expected.running_requests;
        break;
      case RequestState::Swapped:
        ++expected.swapped_requests;
        break;
      case RequestState::Finished:
      case RequestState::Rejected:
        continue;
    }
    ++expected.outstanding_requests;
  }
  const ReplicaView view = replica.view();
  CHECK(view.replica == 3);
  CHECK(view.outstanding_requests == expected.outstanding_requests);
  CHECK(view.waiting_requests == expected.waiting_requests);
  CHECK(view.running_requests == expected.running_requests);
  CHECK(view.swapped_requests == expected.swapped_requests);
  CHECK(view.waiting_tokens == expected.waiting_tokens);
  CHECK(view.kv_capacity_tokens == 256);
  CHECK(view.kv_used_tokens == (blocks.total_blocks() - blocks.free_blocks()) * 16);
  CHECK(view.kv_free_tokens == blocks.free_blocks() * 16);
  const KvUsage usage = replica.allocator().usage(0);
  CHECK(view.kv_used_tokens == usage.used());
  CHECK(view.kv_free_tokens == usage.free);
}

}  // namespace

TEST_CASE("a replica's view agrees with its requests and its allocator after every step",
          "[cluster][view]") {
  const test::FixedTimeModel model(0.01);
  test::NullObserver observer;
  auto allocator = std::make_unique<PagedAllocator>(256, 16, 0.0);  // 16 blocks
  const PagedAllocator& blocks = *allocator;
  // Preemption by recompute (no swap space), or by swap (room for one request's KV).
  const std::int64_t swap_tokens = GENERATE(0, 130);
  INFO("swap space for " << swap_tokens << " tokens");
  Replica replica(3, std::move(allocator),
                  std::make_unique<VllmScheduler>(VllmSchedulerOptions{}, swap_tokens), model, 1,
                  4096, observer, SwapLink{}, false);

  // Four prompts of 100 tokens (7 blocks each): two fit, and as they grow past 8 blocks each
  // one is preempted.
  constexpr std::int64_t kRequests = 4;
  test::RequestArena arena;
  for (std::int64_t id = 0; id < kRequests; ++id)
    replica.enqueue(arena.add(100, 60), SimTime{});
  check_view(replica, blocks, arena, kRequests);
  CHECK(replica.view().waiting_tokens == 400);

  ReplicaView most = replica.view();  // the most of each count seen
  SimTime now;
  std::int64_t steps = 0;
  bool recomputing = false;  // a waiting request, preempted by recompute, held generated tokens
  while (replica.has_work() && steps < 1000) {
    const auto launch = replica.try_launch(now);
    REQUIRE(launch);
    ++steps;
    check_view(replica, blocks, arena, kRequests);
    for (std::int64_t id = 0; id < kRequests; ++id)
      recomputing = recomputing || arena.request(id)->state == RequestState::Preempted;
    const ReplicaView view = replica.view();
    most.waiting_requests = std::max(most.waiting_requests, view.waiting_requests);
    most.running_requests = std::max(most.running_requests, view.running_requests);
    most.swapped_requests = std::max(most.swapped_requests, view.swapped_requests);
    most.kv_used_tokens = std::max(most.kv_used_tokens, view.kv_used_tokens);
    now = launch->done_at;
    replica.complete(launch->batch, now);
    check_view(replica, blocks, arena, kRequests);
  }
  CHECK_FALSE(replica.has_work());
  CHECK(replica.view().outstanding_requests == 0);
  CHECK(replica.view().kv_used_tokens == 0);
  // Every count moved: the view was checked in each state.
  CHECK(most.waiting_requests == kRequests);
  CHECK(most.running_requests >= 2);
  CHECK(most.swapped_requests == (swap_tokens > 0 ? 1 : 0));
  CHECK(recomputing == (swap_tokens == 0));
  CHECK(most.kv_used_tokens == 256);
  std::int32_t preemptions = 0;
  for (std::int64_t id = 0; id < kRequests; ++id)
    preemptions += arena.request(id)->preemptions;
  CHECK(preemptions >= 2);
}
