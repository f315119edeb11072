#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/cluster/router.h"
#include "sim/cluster/serving_observer.h"
#include "sim/hardware/execution_time_model.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

// Host memory for preemption by swap, and the link KV blocks cross to reach it.
struct SwapLink {
  std::int64_t capacity_tokens = 0;  // 0: no swap space, preemption recomputes
  double bytes_per_token = 0;        // KV bytes of one token on one GPU
  double bytes_per_s = 0;            // achieved host-link bandwidth of one GPU
};

// One model instance on TP x PP GPUs. It runs batches: the scheduler plans one, the cost
// model prices it, and when it completes the replica applies its results (tokens emitted,
// finished requests released). With P pipeline stages up to P batches are in flight: a new
// one may start each time the first stage frees, and each takes P stage times to finish.
class Replica {
 public:
  Replica(std::int32_t id, std::unique_ptr<IKvCacheAllocator> allocator,
          std::unique_ptr<IBatchScheduler> scheduler, const IExecutionTimeModel& time_model,
          std::int64_t pipeline_stages, std::int64_t max_sequence_tokens,
          IServingObserver& observer, const SwapLink& swap = {});

  std::int32_t id() const { return id_; }
  std::optional<std::string> reject_reason(const RequestSpec& request) const;
  void enqueue(Request* request);

  struct Launch {
    std::int64_t batch = 0;
    SimTime stage_free_at;  // when the next batch may start
    SimTime done_at;        // when this batch's tokens are out
  };
  // Plans and starts a batch at `now` if the first stage is free and there is work.
  std::optional<Launch> try_launch(SimTime now);
  // Applies the results of a launched batch at its completion time and returns the requests
  // it finished, already released and out of the queues, in arrival order.
  std::vector<Request*> complete(std::int64_t batch, SimTime now);
  bool has_work() const {
    return !queues_.waiting.empty() || !queues_.running.empty() || !queues_.swapped.empty();
  }
  // True while the first pipeline stage is still working on the last batch launched.
  bool stage_busy(SimTime now) const { return now < stage_free_at_; }
  ReplicaLoad load() const;
  const IKvCacheAllocator& allocator() const { return *allocator_; }

 private:
  std::int32_t id_;
  std::unique_ptr<IKvCacheAllocator> allocator_;
  std::unique_ptr<IBatchScheduler> scheduler_;
  const IExecutionTimeModel& time_model_;
  std::int64_t pipeline_stages_;
  std::int64_t max_sequence_tokens_;  // the model's (or --max-len) maximum context
  IServingObserver& observer_;
  SwapLink swap_;

  RequestQueues queues_;
  std::unordered_map<std::int64_t, BatchPlan> in_flight_;
  std::int64_t next_batch_ = 0;
  std::int64_t outstanding_ = 0;
  SimTime stage_free_at_;
};

}  // namespace servesim
