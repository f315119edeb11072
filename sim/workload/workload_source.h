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
  // A request of this source finished at `now`; `request` is the request as served (its
  // output cut where the maximum sequence length cut it).
  virtual void on_request_done(const RequestSpec& request, SimTime now) {
    (void)request;
    (void)now;
  }
  // A request of this source was rejected at `now`, its arrival: by default as if done.
  virtual void on_request_rejected(const RequestSpec& request, SimTime now) {
    on_request_done(request, now);
  }
  // `pending`, the request next() returned last, has not arrived yet. A closed-loop source
  // that has since learnt of an earlier arrival (a completion releasing a next request sooner)
  // takes `pending` back and returns true: the caller drops it and calls next() again, which
  // hands out the earlier request under pending's id, so ids stay in arrival order; `pending`
  // comes again later. Open-loop sources know their arrivals in order: false.
  virtual bool take_back(const RequestSpec& pending) {
    (void)pending;
    return false;
  }
};

}  // namespace servesim
