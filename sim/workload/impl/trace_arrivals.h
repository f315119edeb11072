#pragma once

#include <cstddef>
#include <memory>

#include "sim/workload/arrival_process.h"
#include "sim/workload/trace_reader.h"

namespace servesim {

// Replays a trace's arrival times, multiplied by time_scale (2 halves the rate).
class TraceArrivals final : public IArrivalProcess {
 public:
  TraceArrivals(std::shared_ptr<const Trace> trace, double time_scale);
  std::optional<SimTime> next(Rng& rng) override;
  bool exhausted() const override { return next_row_ == trace_->size(); }

 private:
  std::shared_ptr<const Trace> trace_;
  double time_scale_;
  std::size_t next_row_ = 0;
};

}  // namespace servesim
