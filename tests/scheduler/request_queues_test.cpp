// RequestQueues: each queue kept in its IQueueOrder, requests moved between the queues only
// through its methods, waiting_tokens kept with the waiting queue.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/core/error.h"
#include "sim/scheduler/request_lifecycle.h"
#include "sim/scheduler/request_queues.h"
#include "tests/support/requests.h"

using namespace servesim;
using test::ids_of;
using Ids = std::vector<std::int64_t>;

namespace {

// The latest arrival first: any order but arrival order tells whether the queues follow it.
class ReverseId final : public IQueueOrder {
 public:
  bool before(const Request& a, const Request& b) const override { return a.spec.id > b.spec.id; }
};

// Requests 0 .. n - 1, each with a prompt of 10 * (id + 1) tokens.
test::RequestArena arena_of(int n) {
  test::RequestArena arena;
  for (int i = 0; i < n; ++i)
    arena.add(10 * (i + 1), 4);
  return arena;
}

}  // namespace

TEST_CASE("queues: enqueue keeps the queue order and waiting_tokens follows it",
          "[scheduler][queues]") {
  const FirstComeFirstServed order;
  RequestQueues queues(order);
  const auto arena = arena_of(4);
  CHECK(queues.empty());
  for (const int id : {2, 0, 3, 1})
    queues.enqueue(arena.request(id));
  CHECK(ids_of(queues.waiting()) == Ids{0, 1, 2, 3});
  CHECK(queues.waiting_tokens() == 10 + 20 + 30 + 40);
  CHECK_FALSE(queues.empty());

  CHECK(queues.pop_waiting() == arena.request(0));
  CHECK(queues.waiting_tokens() == 20 + 30 + 40);
  CHECK(queues.pop_waiting() == arena.request(1));
  CHECK(ids_of(queues.waiting()) == Ids{2, 3});
  CHECK(queues.waiting_tokens() == 30 + 40);
}

TEST_CASE("queues: a preempted request goes back in order, with its generated tokens",
          "[scheduler][queues]") {
  const FirstComeFirstServed order;
  RequestQueues queues(order);
  const auto arena = arena_of(4);
  for (int id = 0; id < 4; ++id)
    queues.enqueue(arena.request(id));
  Request* first = queues.pop_waiting();
  Request* second = queues.pop_waiting();
  for (Request* r : {first, second}) {
    admit(*r);
    queues.add_running(r);
    REQUIRE(complete_step(*r, r->tokens(), SimTime{}));  // one token generated
  }
  CHECK(queues.waiting_tokens() == 30 + 40);

  // The later one first: each goes back among the waiting in arrival order.
  for (Request* r : {second, first}) {
    queues.remove_running(r);
    preempt_by_recompute(*r);
    queues.enqueue(r);
  }
  CHECK(queues.running().empty());
  CHECK(ids_of(queues.waiting()) == Ids{0, 1, 2, 3});
  CHECK(queues.waiting_tokens() == 11 + 21 + 30 + 40);
  CHECK(queues.pop_waiting() == first);
  CHECK(queues.waiting_tokens() == 21 + 30 + 40);
}

TEST_CASE("queues: add_running keeps the order, and remove_running of a stranger throws",
          "[scheduler][queues]") {
  const FirstComeFirstServed order;
  RequestQueues queues(order);
  const auto arena = arena_of(6);
  for (const int id : {1, 4, 2, 5})
    queues.add_running(arena.request(id));
  CHECK(ids_of(queues.running()) == Ids{1, 2, 4, 5});
  queues.remove_running(arena.request(2));
  CHECK(ids_of(queues.running()) == Ids{1, 4, 5});
  CHECK_THROWS_AS(queues.remove_running(arena.request(2)), InvariantError);
  CHECK_THROWS_AS(queues.remove_running(arena.request(0)), InvariantError);
  CHECK(ids_of(queues.running()) == Ids{1, 4, 5});
}

TEST_CASE("queues: retire takes finished requests out, in queue order or not",
          "[scheduler][queues]") {
  const FirstComeFirstServed order;
  RequestQueues queues(order);
  const auto arena = arena_of(6);
  for (int id = 0; id < 6; ++id)
    queues.add_running(arena.request(id));
  const auto done = [&](std::vector<int> ids) {
    std::vector<Request*> finished;
    for (const int id : ids) {
      finish(*arena.request(id));
      finished.push_back(arena.request(id));
    }
    return finished;
  };

  SECTION("one") {
    queues.retire(done({3}));
    CHECK(ids_of(queues.running()) == Ids{0, 1, 2, 4, 5});
  }
  SECTION("several, in queue order") {
    queues.retire(done({1, 3, 4}));
    CHECK(ids_of(queues.running()) == Ids{0, 2, 5});
  }
  SECTION("several, out of queue order: the fallback finds them by state") {
    queues.retire(done({4, 0, 2}));
    CHECK(ids_of(queues.running()) == Ids{1, 3, 5});
  }
  SECTION("none") {
    queues.retire({});
    CHECK(queues.running().size() == 6);
  }
  SECTION("a finished request that is not running is an invariant failure") {
    queues.retire(done({2}));
    CHECK_THROWS_AS(queues.retire(std::vector<Request*>{arena.request(2)}), InvariantError);
  }
}

TEST_CASE("queues: swapped requests park and leave in order", "[scheduler][queues]") {
  const FirstComeFirstServed order;
  RequestQueues queues(order, 1000);
  CHECK(queues.swap().capacity_tokens == 1000);
  const auto arena = arena_of(3);
  queues.park_swapped(arena.request(2));
  queues.park_swapped(arena.request(0));
  CHECK(ids_of(queues.swapped()) == Ids{0, 2});
  CHECK_FALSE(queues.empty());
  CHECK(queues.pop_swapped() == arena.request(0));
  CHECK(queues.pop_swapped() == arena.request(2));
  CHECK(queues.empty());
}

TEST_CASE("queues: a custom IQueueOrder is honoured by every queue", "[scheduler][queues]") {
  const ReverseId order;
  RequestQueues queues(order);
  const auto arena = arena_of(5);
  for (const int id : {1, 3, 0, 2})
    queues.enqueue(arena.request(id));
  CHECK(ids_of(queues.waiting()) == Ids{3, 2, 1, 0});

  for (const int id : {0, 4, 2})
    queues.add_running(arena.request(id));
  CHECK(ids_of(queues.running()) == Ids{4, 2, 0});

  Request* head = queues.pop_waiting();
  CHECK(head == arena.request(3));
  queues.enqueue(head);
  CHECK(ids_of(queues.waiting()) == Ids{3, 2, 1, 0});
  queues.pop_waiting();
  queues.pop_waiting();
  queues.enqueue(arena.request(3));  // before 1 and 0 in this order, not after
  CHECK(ids_of(queues.waiting()) == Ids{3, 1, 0});

  queues.park_swapped(arena.request(1));
  queues.park_swapped(arena.request(3));
  CHECK(ids_of(queues.swapped()) == Ids{3, 1});

  // Out of this order, retire falls back to finding finished requests by state.
  finish(*arena.request(0));
  finish(*arena.request(4));
  queues.retire(std::vector<Request*>{arena.request(0), arena.request(4)});
  CHECK(ids_of(queues.running()) == Ids{2});
}
