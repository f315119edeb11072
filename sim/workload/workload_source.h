#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "sim/core/sim_time.h"
#include "sim/workload/token_content.h"

namespace servesim {

// One request as the workload defines it: when it arrives and how long it is.
struct RequestSpec {
  std::int64_t id = 0;  // 0, 1, 2, ... in arrival order
  SimTime arrival;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
};

// Emits requests in non-decreasing arrival order. Open-loop sources (rates, traces) know
// every arrival in advance; a closed-loop source learns of a new arrival only when one of
// its users' requests finishes, so next() may return nullopt for now while !exhausted().
class IWorkloadSource {
 public:
  virtual ~IWorkloadSource() = default;
  // The next request whose arrival is known, or nullopt if none is known at the moment.
  virtual std::optional<RequestSpec> next() = 0;
  // True once no request will ever be emitted again.
  virtual bool exhausted() const = 0;
  // What the request next() returned last is made of (token_content.h), for a prefix cache;
  // nullptr when the workload does not say, and then its tokens are its own.
  virtual std::shared_ptr<const TokenContent> last_content() const { return nullptr; }
  // A request of this source finished (or was rejected) at `now`.
  virtual void on_request_done(const RequestSpec& request, SimTime now) {
    (void)request;
    (void)now;
  }
};

}  // namespace servesim
