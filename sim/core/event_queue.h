#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/sim_time.h"

namespace servesim {

// A binary-heap event queue with an explicit total order: time first, then a phase number
// the caller assigns per event kind (lower runs first at equal times), then insertion order.
// Equal keys never compare equal, so the order of a run never depends on heap internals.
template <typename Payload>
class EventQueue {
 public:
  struct Event {
    SimTime time;
    int phase = 0;
    std::uint64_t sequence = 0;
    Payload payload;
  };

  void push(SimTime time, int phase, Payload payload) {
    if (time < now_) {
      throw InvariantError("time_monotonic",
                           "event scheduled in the past, at " + std::to_string(time.ns()) +
                               " ns while the clock reads " + std::to_string(now_.ns()) + " ns",
                           now_);
    }
    heap_.push(Event{time, phase, next_sequence_++, std::move(payload)});
  }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  SimTime now() const { return now_; }
  std::uint64_t events_pushed() const { return next_sequence_; }

  // Removes and returns the first event, advancing the clock to its time.
  Event pop() {
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
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  SimTime now_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace servesim
