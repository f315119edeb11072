#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/cluster/decode_reservations.h"
#include "sim/cluster/kv_handoff.h"
#include "sim/cluster/replica.h"
#include "sim/cluster/request_pool.h"
#include "sim/cluster/router.h"
#include "sim/cluster/serving_observer.h"
#include "sim/core/event_queue.h"
#include "sim/workload/workload_source.h"

namespace servesim {

// Same-time events run in this order: completed batches first (they free memory and finish
// requests), then arrivals, then batch launches, so that a launch sees everything that
// happened at its instant. Pinned by a test. Within a phase, events of lower replica index
// run first, so the order never depends on when an event was pushed (which bulk decoding
// changes). A decode run cut short (Replica::cut_decode_run) has its completion event
// cancelled and pushed again at its new time.
// A KV transfer's end (disaggregation) comes after all three, and the abort timeout of KV
// never read after that.
enum class EventPhase : int {
  BatchDone = 0,
  Arrival = 1,
  Launch = 2,
  TransferDone = 3,
  KvExpiry = 4
};

// Prefill/decode disaggregation: the cluster's first `prefill_replicas` replicas (the
// cluster's router picks among them) prefill each prompt, and `handoff` carries its KV to one
// of the others, which `decode_router` picks when the prefill ends, and which decodes it.
// Selective disaggregation (llm-d's): a prompt of at most `local_prefill_max_tokens` tokens skips
// the prefill pool and is prefilled on its decode replica (0: every prompt is handed off).
// After `abort_timeout` (0: never) a prefill replica frees the KV of a prompt whose decode
// replica has not yet had room to take it; the decode side computes that prompt itself.
struct DisaggregatedPools {
  std::int32_t prefill_replicas = 0;
  std::unique_ptr<IRouter> decode_router;
  std::unique_ptr<KvHandoff> handoff;
  std::int64_t local_prefill_max_tokens = 0;
  KvHandoffOrder order = KvHandoffOrder::PullAfterPrefill;
  SimTime abort_timeout;
};

struct ClusterRunStats {
  SimTime end_time;
  std::int64_t arrived = 0;
  std::int64_t finished = 0;
  std::int64_t rejected = 0;
  std::uint64_t events = 0;
  std::int64_t iterations = 0;  // over all replicas, each iteration of a decode run counted
};

// The discrete-event loop of one serving run: requests arrive from the workload, the router
// sends each to a replica (or it is rejected if it can never fit), and replicas run batches
// until every request has finished or been rejected.
//
// A broken invariant anywhere in the run stops it with an InvariantError naming the
// invariant and the simulated time; the loop itself checks requests_terminate (every request
// that arrived finished or was rejected, and the workload is exhausted) and, through the
// event queue, time_monotonic.
class Cluster {
 public:
  // `frontend_latency`: how long after its arrival (the client's send) a request reaches the
  // router and the engine (an engine's host.frontend_latency_s).
  Cluster(std::vector<std::unique_ptr<Replica>> replicas, std::unique_ptr<IRouter> router,
          IWorkloadSource& source, IServingObserver& observer, SimTime frontend_latency = SimTime{},
          std::optional<DisaggregatedPools> pools = std::nullopt);

  ClusterRunStats run();
  // The hand-off of a disaggregated cluster (its summary once run() returns); null otherwise.
  const KvHandoff* handoff() const { return pools_ ? pools_->handoff.get() : nullptr; }

 private:
  struct Event {
    EventPhase kind = EventPhase::Arrival;
    std::int32_t replica = 0;
    std::int64_t batch = 0;
    RequestSpec request;
  };

  // Events are ordered by (time, phase, replica, push order): the queue's phase number is
  // the phase times kReplicaSlots plus the replica index.
  static constexpr int kReplicaSlots = 1 << 28;
  // Every this many events the observer hears how far iterations are reported
  // (report_iteration_bound: a pass over the replicas).
  static constexpr std::uint32_t kReportBoundEvents = 1024;
  // Tells the observer that no iteration reported after `now` (between events) starts
  // before the earliest of the replicas' unreported iterations.
  void report_iteration_bound(SimTime now);
  EventQueue<Event>::EventId push(SimTime time, const Event& event);
  void schedule_next_arrival();
  void on_arrival(const RequestSpec& spec);
  void on_batch_done(std::int32_t replica, std::int64_t batch);
  void on_launch(std::int32_t replica);
  void request_launch(std::int32_t replica);
  // Views change only when a replica's queues or memory do; keeping them current there
  // spares every arrival a pass over all replicas.
  void refresh_view(std::int32_t replica);
  void push_batch_done(SimTime time, std::int32_t replica, std::int64_t batch);
  void on_request_done(const RequestSpec& spec, bool rejected = false);
  // Hands `request` to replica `target` at now: a decode run there is cut for it.
  void deliver(std::int32_t target, Request* request);
  // A decode run on `target` was cut (Replica::cut_decode_run, settle_decode_run): its
  // completion moves to `end`.
  void end_run_at(std::int32_t target, std::optional<SimTime> end);
  // The allocator of `target` is about to change from outside, after this instant's launches
  // (Replica::settle_decode_run).
  void settle_run(std::int32_t target);
  // Disaggregation: a prefilled request's KV leaves for a decode replica once the replica
  // has room for it (or had it before the prefill); a transfer ended.
  void hand_off(std::int32_t prefill_replica, Request* prefilled);
  void start_transfer(std::int32_t prefill_replica, Request* prefilled, std::int32_t decode);
  // Decode room: `waiting` waits for it on decode replica `decode` (index among the decode
  // replicas), which reserves it at its next iteration boundary (at once when idle).
  void wait_for_decode_room(std::int32_t decode, const DecodeReservations::Waiting& waiting);
  void reserve_decode_room(std::int32_t decode);
  std::int32_t route_to_decode(const RequestSpec& spec, const Request& request);
  std::int64_t decode_cached_tokens(const Request& request, std::int32_t decode) const;
  void on_transfer_done(std::int64_t transfer);
  // The prefill replica `replica` gives up on request `request`'s decode side: frees its KV.
  void on_kv_expiry(std::int32_t replica, std::int64_t request);
  // The prefilled request goes on as the request it stands for on decode replica `decode`
  // (index among them), whose room set aside for it passes to the scheduler's admission:
  // with its prompt's KV but the last token's arrived (`kv_arrived`), or to compute it whole.
  void decode_on(std::int32_t decode, Request* prefilled, bool kv_arrived);
  void schedule_transfers(const std::vector<KvLinks::Change>& changes);
  // `router` picks among replicas [first, first + count) for `request` (whose block
  // identities are `hashes`, or null): their views, with the cached prefix for a router that
  // reads it. Returns the replica's index in the cluster.
  std::int32_t route_among(IRouter& router, std::size_t first, std::size_t count,
                           const RequestSpec& request, const std::vector<std::uint64_t>* hashes);
  // The replicas an arriving request is routed among: the prefill pool, or all of them.
  std::size_t entry_replicas() const {
    return pools_ ? static_cast<std::size_t>(pools_->prefill_replicas) : replicas_.size();
  }

  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<IRouter> router_;
  IWorkloadSource& source_;
  IServingObserver& observer_;

  EventQueue<Event> queue_;
  RequestPool requests_;  // the requests arrived and not yet finished or rejected
  std::vector<bool> launch_pending_;
  std::vector<ReplicaView> views_;  // current only when router_reads_views_
  bool router_reads_views_;
  // The prefix cache's block size (0: none runs), and what the pending arrival is made of.
  std::int64_t prefix_block_tokens_ = 0;
  std::shared_ptr<const TokenContent> pending_content_;
  // Each replica's last batch-completion event pushed, and the batch it completes: a decode
  // run's, while one is in flight (runs are launched only where one batch is in flight at a
  // time), which a cut cancels.
  struct PendingCompletion {
    EventQueue<Event>::EventId event;
    std::int64_t batch = 0;
  };
  std::vector<PendingCompletion> last_completion_;
  SimTime frontend_latency_;
  bool arrival_pending_ = false;
  // The pending arrival, which a closed-loop source may take back (IWorkloadSource::take_back).
  EventQueue<Event>::EventId pending_arrival_event_;
  RequestSpec pending_arrival_;
  ClusterRunStats stats_;
  std::optional<DisaggregatedPools> pools_;
  // Disaggregation: each transfer's pending end event, and each prefilling request's output
  // as served and as requested (the prefill side serves it with one output token).
  std::unordered_map<std::int64_t, EventQueue<Event>::EventId> transfer_events_;
  // The abort timeout's pending event of each prefilled request waiting for decode room, and
  // the requests whose KV it has freed.
  std::unordered_map<std::int64_t, EventQueue<Event>::EventId> expiry_events_;
  std::unordered_set<std::int64_t> expired_;
  struct Outputs {
    std::int64_t served = 0;
    std::int64_t requested = 0;
    std::int32_t decode = -1;  // its decode replica (among them), once picked
  };
  std::optional<DecodeReservations> reservations_;
  std::unordered_map<std::int64_t, Outputs> to_decode_;
  // The request a prefilled one stands for on the decode side.
  RequestSpec decoded_spec(const Request& prefilled) const {
    RequestSpec spec = prefilled.spec;
    spec.output_tokens = to_decode_.at(spec.id).served;
    return spec;
  }
};

}  // namespace servesim
