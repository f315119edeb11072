#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "sim/core/rng.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/workload_source.h"

namespace servesim {

// When a workload ends, whichever comes first; a trace (or trace lengths) also ends it.
struct StopConditions {
  std::optional<std::int64_t> max_requests;
  std::optional<SimTime> end_time;  // requests arrive before it: [0, end_time)
};

// A workload source built from an arrival process and a length distribution: request i gets
// the i-th arrival and the i-th length pair, and id i. It looks one arrival ahead, so that
// exhausted() turns true as soon as the stop conditions are met rather than one next() later.
class ComposedWorkloadSource final : public IWorkloadSource {
 public:
  ComposedWorkloadSource(std::unique_ptr<IArrivalProcess> arrivals,
                         std::unique_ptr<ILengthDistribution> lengths, Rng arrival_rng,
                         Rng length_rng, StopConditions stop);

  std::optional<RequestSpec> next() override;
  bool exhausted() const override { return stopped_; }
  // The length distribution's content of the request next() returned last.
  std::shared_ptr<const TokenContent> last_content() const override { return last_content_; }
  void on_request_done(const RequestSpec& request, SimTime now) override;

 private:
  // Pulls the next known arrival into lookahead_, or marks the source stopped.
  void look_ahead();

  std::unique_ptr<IArrivalProcess> arrivals_;
  std::unique_ptr<ILengthDistribution> lengths_;
  Rng arrival_rng_;
  Rng length_rng_;
  StopConditions stop_;
  std::optional<SimTime> lookahead_;
  std::shared_ptr<const TokenContent> last_content_;
  SimTime last_arrival_;
  std::int64_t emitted_ = 0;
  bool stopped_ = false;
};

}  // namespace servesim
