#pragma once

#include <cstdint>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/sim_time.h"

namespace servesim {

// A binary-heap event queue with an explicit total order: time first, then a phase number
// the caller assigns per event kind (lower runs first at equal times), then insertion order.
// Equal keys never compare equal, so the order of a run never depends on heap internals.
// A pending event can be cancelled: it is then never popped and never moves the clock.
template <typename Payload>
class EventQueue {
 public:
  // Names a pushed event (for cancel): its time and insertion sequence.
  struct EventId {
    SimTime time;
    std::uint64_t sequence = 0;
  };

  struct Event {
    SimTime time;
    int phase = 0;
    std::uint64_t sequence = 0;
    Payload payload;
  };

  EventId push(SimTime time, int phase, Payload payload) {
    if (time < now_) {
      throw InvariantError("time_monotonic",
                           "event scheduled in the past, at " + std::to_string(time.ns()) +
                               " ns while the clock reads " + std::to_string(now_.ns()) + " ns",
                           now_);
    }
    heap_.push(Event{time, phase, next_sequence_, std::move(payload)});
    return EventId{time, next_sequence_++};
  }

  // Drops a pushed event that has not been popped yet. Cancelled events stay in the heap
  // until they reach its top; the cancelled ones are kept in time order, so cancelling and
  // dropping each cost O(log cancelled) and a pop checks them in O(1).
  void cancel(EventId event) {
    if (event.sequence >= next_sequence_ || event.time < now_ ||
        !cancelled_.insert({event.time, event.sequence}).second) {
      throw InvariantError("cancelled event " + std::to_string(event.sequence) +
                           " is unknown, past or already cancelled");
    }
  }

  bool empty() const { return heap_.size() == cancelled_.size(); }
  std::size_t size() const { return heap_.size() - cancelled_.size(); }
  SimTime now() const { return now_; }
  std::uint64_t events_pushed() const { return next_sequence_; }

  // Removes and returns the first event that is not cancelled, advancing the clock to its
  // time. The queue must not be empty().
  Event pop() {
    // The top is never later than a cancelled event, and can be one only at its time.
    if (!cancelled_.empty() && heap_.top().time == cancelled_.begin()->first) drop_cancelled_top();
    Event event = heap_.top();
    heap_.pop();
    if (event.time < now_) {
      throw InvariantError("time_monotonic", "the next event lies before the clock", now_);
    }
    now_ = event.time;
    return event;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.phase != b.phase) return a.phase > b.phase;
      return a.sequence > b.sequence;
    }
  };
  [[gnu::noinline]] void drop_cancelled_top() {
    while (!cancelled_.empty()) {
      const auto it = cancelled_.find({heap_.top().time, heap_.top().sequence});
      if (it == cancelled_.end()) return;
      cancelled_.erase(it);
      heap_.pop();
    }
  }

  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  // Cancelled and still in the heap, by (time, sequence).
  std::set<std::pair<SimTime, std::uint64_t>> cancelled_;
  SimTime now_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace servesim
