#pragma once

#include <optional>

#include "sim/core/rng.h"
#include "sim/core/sim_time.h"

namespace servesim {

// The latest arrival a workload may produce, in seconds (about 31.7 years): every time a
// workload reads or draws (durations, think times, trace rows, scaled or drawn gaps) is
// checked against it, so simulated time stays far inside SimTime's 292 years and a bad value
// is an input error instead of an overflow.
inline constexpr double kMaxArrivalTimeS = 1e9;

// When requests arrive. Open-loop processes (rates, traces) know every arrival in advance; a
// closed-loop process learns of the next one only when a request it released finishes.
// A process knows nothing of request lengths or of how many requests the run wants: the
// workload source applies the stop conditions.
class IArrivalProcess {
 public:
  virtual ~IArrivalProcess() = default;
  // The next arrival time, never earlier than the previous one; nullopt when none is known at
  // the moment or none will ever come (then exhausted()). Random draws come from `rng`, the
  // caller's "arrivals" stream, so the process holds no randomness of its own.
  virtual std::optional<SimTime> next(Rng& rng) = 0;
  // True once next() will never return an arrival again.
  virtual bool exhausted() const = 0;
  // A request this process released finished (or was rejected) at `now`; calls come in
  // non-decreasing `now`.
  virtual void on_request_done(SimTime now) { (void)now; }
};

}  // namespace servesim
