// The cluster's side of prefill/decode disaggregation: picking the decode replica, setting
// its KV room aside, the transfers and their ends (sim/cluster/cluster.h, DisaggregatedPools).
#include "sim/cluster/cluster.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

std::int32_t Cluster::route_to_decode(const RequestSpec& spec, const Request& request) {
  const auto first_decode = static_cast<std::size_t>(pools_->prefill_replicas);
  return route_among(*pools_->decode_router, first_decode, replicas_.size() - first_decode, spec,
                     request.block_hashes.get()) -
         pools_->prefill_replicas;
}

// Blocks the decode replica's prefix cache holds need not cross (vLLM's connector asks the
// decode side's cache first); the count stands for the decode side's admission, which holds
// them then unless evicted meanwhile.
std::int64_t Cluster::decode_cached_tokens(const Request& request, std::int32_t decode) const {
  if (!request.has_content) return 0;
  const auto index = static_cast<std::size_t>(pools_->prefill_replicas + decode);
  return std::min(replicas_[index]->allocator().cached_prefix_tokens(prefix_key(request)),
                  request.spec.prompt_tokens);
}

void Cluster::hand_off(std::int32_t prefill_replica, Request* prefilled) {
  Outputs& outputs = to_decode_.at(prefilled->spec.id);
  if (pools_->order == KvHandoffOrder::ReserveBeforePrefill) {
    start_transfer(prefill_replica, prefilled, outputs.decode);  // its room was set aside
    return;
  }
  if (outputs.decode < 0) outputs.decode = route_to_decode(decoded_spec(*prefilled), *prefilled);
  const std::int32_t decode = outputs.decode;
  if (pools_->abort_timeout > SimTime{}) {
    expiry_events_[prefilled->spec.id] =
        push(queue_.now() + pools_->abort_timeout,
             Event{EventPhase::KvExpiry, prefill_replica, prefilled->spec.id, {}});
  }
  wait_for_decode_room(
      decode, {true, prefilled, prefill_replica,
               std::max<std::int64_t>(
                   1, prefilled->spec.prompt_tokens - decode_cached_tokens(*prefilled, decode))});
}

void Cluster::wait_for_decode_room(std::int32_t decode,
                                   const DecodeReservations::Waiting& waiting) {
  reservations_->wait(decode, waiting);
  // The replica's allocator is current between iterations: a decode run ends with the
  // iteration in flight, and the room is looked for when it completes.
  const std::int32_t replica = pools_->prefill_replicas + decode;
  end_run_at(replica, replicas_[static_cast<std::size_t>(replica)]->cut_decode_run(queue_.now()));
  if (!replicas_[static_cast<std::size_t>(replica)]->batch_in_flight()) {
    reserve_decode_room(decode);
  }
}

void Cluster::reserve_decode_room(std::int32_t decode) {
  const std::int32_t replica = pools_->prefill_replicas + decode;
  const auto reserved =
      reservations_->reserve(decode, *replicas_[static_cast<std::size_t>(replica)]);
  if (reserved.empty()) return;
  refresh_view(replica);
  for (const DecodeReservations::Waiting& r : reserved) {
    if (r.prefilled && expired_.erase(r.request->spec.id) != 0) {
      // Its KV is gone (vLLM's decode side finds the read failed and computes it again).
      pools_->handoff->on_expired(r.request->spec.id);
      decode_on(decode, r.request, /*kv_arrived=*/false);
    } else if (r.prefilled) {
      start_transfer(r.from, r.request, decode);
    } else {
      deliver(route_among(*router_, 0, entry_replicas(), r.request->spec,
                          r.request->block_hashes.get()),
              r.request);
    }
  }
}

void Cluster::start_transfer(std::int32_t prefill_replica, Request* prefilled,
                             std::int32_t decode) {
  if (const auto it = expiry_events_.find(prefilled->spec.id); it != expiry_events_.end()) {
    queue_.cancel(it->second);
    expiry_events_.erase(it);
  }
  const KvHandoff::Started started = pools_->handoff->start(
      prefilled, prefill_replica, decode, decode_cached_tokens(*prefilled, decode), queue_.now());
  schedule_transfers(started.changes);
}

void Cluster::schedule_transfers(const std::vector<KvLinks::Change>& changes) {
  for (const KvLinks::Change& change : changes) {
    if (const auto it = transfer_events_.find(change.transfer); it != transfer_events_.end()) {
      queue_.cancel(it->second);
    }
    transfer_events_[change.transfer] =
        push(change.done_at, Event{EventPhase::TransferDone, 0, change.transfer, {}});
  }
}

void Cluster::on_transfer_done(std::int64_t transfer) {
  transfer_events_.erase(transfer);
  std::vector<KvLinks::Change> changes;
  const KvHandoff::Arrived arrived = pools_->handoff->finish(transfer, queue_.now(), changes);
  schedule_transfers(changes);
  // The prefill side frees the blocks the decode side has read.
  settle_run(arrived.from);
  replicas_[static_cast<std::size_t>(arrived.from)]->release_held_kv(arrived.prefilled->spec.id);
  refresh_view(arrived.from);
  request_launch(arrived.from);
  decode_on(arrived.to, arrived.prefilled, /*kv_arrived=*/true);
}

void Cluster::on_kv_expiry(std::int32_t replica, std::int64_t request) {
  expiry_events_.erase(request);
  settle_run(replica);
  replicas_[static_cast<std::size_t>(replica)]->release_held_kv(request);
  expired_.insert(request);
  refresh_view(replica);
  request_launch(replica);
}

void Cluster::decode_on(std::int32_t decode, Request* prefilled, bool kv_arrived) {
  const auto wanted = to_decode_.find(prefilled->spec.id);
  if (wanted == to_decode_.end()) {
    throw InvariantError("request " + std::to_string(prefilled->spec.id) +
                         " was prefilled for nobody");
  }
  const RequestSpec spec = decoded_spec(*prefilled);
  const std::int64_t requested = wanted->second.requested;
  to_decode_.erase(wanted);
  auto hashes = std::move(prefilled->block_hashes);
  const bool has_content = prefilled->has_content;
  requests_.release(prefilled);
  Request* request = requests_.acquire();
  request->spec = spec;
  request->requested_output_tokens = requested;
  request->block_hashes = std::move(hashes);
  request->has_content = has_content;
  // Every prompt token's KV arrived; the last is computed again to sample the first output
  // token (vLLM's scheduler takes one token off a full remote hit). The room set aside for it
  // passes to the decode scheduler's admission.
  if (kv_arrived) request->remote_kv_tokens = static_cast<std::int32_t>(spec.prompt_tokens - 1);
  const std::int32_t decode_replica = pools_->prefill_replicas + decode;
  // The room set aside is freed now, between launches the decode run there stood for.
  settle_run(decode_replica);
  reservations_->release(*replicas_[static_cast<std::size_t>(decode_replica)], spec.id);
  deliver(decode_replica, request);
}

}  // namespace servesim
