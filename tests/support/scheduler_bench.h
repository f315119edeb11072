#pragma once

// Shared by the scheduler tests: a replica's bookkeeping without the clock, and a miniature
// contiguous allocator.

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/memory/impl/paged_allocator.h"
#include "sim/scheduler/batch_scheduler.h"
#include "sim/scheduler/request_lifecycle.h"

namespace servesim::test {

// Contiguous allocation in miniature: admission reserves a region of final_tokens, and a
// sequence can never grow past its region.
class ReservingAllocator final : public IKvCacheAllocator {
 public:
  explicit ReservingAllocator(std::int64_t capacity_tokens) : capacity_(capacity_tokens) {}
  bool fits_when_empty(std::int64_t final_tokens) const override {
    return final_tokens <= capacity_;
  }
  bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const override {
    return tokens <= final_tokens && reserved_ + final_tokens <= capacity_;
  }
  std::int64_t admit(std::int64_t sequence, std::int64_t tokens,
                     std::int64_t final_tokens) override {
    if (!can_admit(tokens, final_tokens)) throw std::logic_error("admitted without room");
    regions_[sequence] = {tokens, final_tokens};
    reserved_ += final_tokens;
    return 0;
  }
  bool can_grow(std::int64_t sequence, std::int64_t tokens) const override {
    const auto& [held, size] = regions_.at(sequence);
    return held + tokens <= size;
  }
  void grow(std::int64_t sequence, std::int64_t tokens) override {
    if (!can_grow(sequence, tokens)) throw std::logic_error("grew past the region");
    regions_.at(sequence).first += tokens;
  }
  void release(std::int64_t sequence) override {
    reserved_ -= regions_.at(sequence).second;
    regions_.erase(sequence);
  }
  KvUsage usage(std::int64_t /*next_final_tokens*/) const override {
    KvUsage u{capacity_, 0, reserved_, 0, 0, capacity_ - reserved_};
    for (const auto& [sequence, region] : regions_)
      u.token_states += region.first;
    u.reserved -= u.token_states;
    return u;
  }
  std::int64_t capacity_tokens() const override { return capacity_; }
  std::int64_t sequences() const override { return static_cast<std::int64_t>(regions_.size()); }

 private:
  std::int64_t capacity_;
  std::int64_t reserved_ = 0;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> regions_;  // held, size
};

// A replica's bookkeeping without the clock: requests, the scheduler (which owns the
// queues), and the effect of a plan, through the same lifecycle functions the replica uses.
template <typename Scheduler>
struct SchedulerBench {
  std::unique_ptr<IKvCacheAllocator> allocator;
  Scheduler scheduler;
  std::vector<std::unique_ptr<Request>> requests;

  template <typename Options, typename... More>
  SchedulerBench(std::unique_ptr<IKvCacheAllocator> kv, const Options& options, More... more)
      : allocator(std::move(kv)), scheduler(options, more...) {}

  const RequestQueues& queues() const { return scheduler.queues(); }

  Request* arrive(std::int64_t prompt, std::int64_t output) {
    requests.push_back(std::make_unique<Request>());
    Request* r = requests.back().get();
    r->spec = RequestSpec{static_cast<std::int64_t>(requests.size()) - 1, {}, prompt, output};
    scheduler.enqueue(r);
    return r;
  }

  bool idle() const { return queues().running().empty() && queues().waiting().empty(); }

  BatchPlan launch() {
    BatchPlan plan;
    scheduler.plan(*allocator, plan);
    for (const auto& w : plan.work)
      w.request->in_flight = true;
    return plan;
  }

  // As Replica::complete: complete every step, then retire finished requests.
  void complete(const BatchPlan& plan) {
    std::vector<Request*> finished;
    for (const auto& w : plan.work) {
      Request& r = *w.request;
      if (complete_step(r, w.tokens, SimTime{}) && r.finished()) finished.push_back(&r);
    }
    std::sort(finished.begin(), finished.end(),
              [](const Request* a, const Request* b) { return a->spec.id < b->spec.id; });
    for (Request* r : finished) {
      allocator->release(r->spec.id);
      finish(*r);
    }
    scheduler.retire(finished);
  }

  BatchPlan step() {
    BatchPlan plan = launch();
    complete(plan);
    return plan;
  }
};

inline std::unique_ptr<IKvCacheAllocator> paged(std::int64_t capacity_tokens) {
  return std::make_unique<PagedAllocator>(capacity_tokens, 16, 0.0);
}

inline std::vector<std::int64_t> ids(const BatchPlan& plan) {
  std::vector<std::int64_t> out;
  for (const auto& w : plan.work)
    out.push_back(w.request->spec.id);
  return out;
}

}  // namespace servesim::test
