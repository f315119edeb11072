#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/cluster/kv_links.h"
#include "sim/metrics/run_summary.h"
#include "sim/scheduler/request.h"

namespace servesim {

// What a hand-off moves and over what: the KV bytes of one prompt token (every layer, the
// whole replica's share, as the prefill side holds it), and each replica's port.
struct KvHandoffOptions {
  double bytes_per_token = 0;
  std::vector<double> prefill_port_bytes_per_s;  // one per prefill replica
  std::vector<double> decode_port_bytes_per_s;   // one per decode replica
  SimTime latency;                               // per transfer
  // Layer-wise streaming over `layers` layers: the KV of each layer leaves when the prefill
  // has computed it, so at the prefill's end only what the link could not move meanwhile is
  // left (see KvHandoff::start).
  bool layerwise = false;
  std::int64_t layers = 1;
};

// The hand-off of prefill/decode disaggregation, as vLLM's NIXL connector makes it: the
// prefill replica computes the prompt and samples a first token (which the client never sees),
// keeps the request's KV blocks, and the decode replica the router picked then reads them
// whole; the prefill side frees them when the read completes. The decode side computes the
// last prompt token again to sample the first output token, which is the one the client
// gets: its TTFT ends on the decode side. Transfers share their ports (KvLinks).
//
// It keeps each request's TTFT parts, which add up to its TTFT: prefill_queue (arrival to its
// first prefill step), prefill (to the end of the prefill), transfer_queue (to the start of
// the transfer; 0, a transfer starts when its prefill ends), transfer, decode_queue (from the
// KV's arrival to the first decode-side step) and first_decode (that step).
class KvHandoff {
 public:
  explicit KvHandoff(KvHandoffOptions options);

  // A prefilled request leaves prefill replica `from` (index among the prefill replicas) at
  // `now` for decode replica `to`, whose prefix cache holds its first `cached_tokens`: the
  // transfer of the rest starts. Returns its id and the transfers whose end time changed,
  // this one included.
  struct Started {
    std::int64_t transfer = 0;
    std::vector<KvLinks::Change> changes;
  };
  Started start(Request* prefilled, std::int32_t from, std::int32_t to, std::int64_t cached_tokens,
                SimTime now);

  // Transfer `transfer` ended at `now`. Returns what it carried; `changes` gets the other
  // transfers whose end time changed.
  struct Arrived {
    Request* prefilled = nullptr;  // the prefill side's request, its blocks still held
    std::int32_t from = 0;
    std::int32_t to = 0;
  };
  Arrived finish(std::int64_t transfer, SimTime now, std::vector<KvLinks::Change>& changes);

  // The request decoding on the decode side has finished: returns its TTFT parts, in
  // seconds, in kTtftPartNames order; nothing for a request prefilled there (no hand-off).
  // Throws InvariantError for a request that had neither.
  std::optional<std::array<double, kTtftParts>> on_decoded(const Request& decoded);
  // Request `request`'s prompt is prefilled on its decode replica (selective disaggregation).
  void on_local_prefill(std::int64_t request) {
    ++local_prefills_;
    local_.insert(request);
  }

  std::size_t in_flight() const { return links_.in_flight(); }
  // Means and p99s of the TTFT parts over the finished requests, and the transfers' totals
  // and (over a run of `duration_s`) their mean number in flight and the links' utilization.
  KvTransferSummary summary(double duration_s) const;

 private:
  struct Parts {
    SimTime arrival;
    SimTime prefill_start;
    SimTime prefill_end;
    SimTime transfer_start;
    SimTime transfer_end;
  };
  struct InFlight {
    Request* prefilled = nullptr;
    std::int32_t from = 0;
    std::int32_t to = 0;
  };
  KvHandoffOptions options_;
  KvLinks links_;
  std::int64_t next_transfer_ = 0;
  std::unordered_map<std::int64_t, InFlight> transfers_;  // by transfer id
  std::unordered_map<std::int64_t, Parts> parts_;         // by request id, until decoded
  // The finished requests' parts, in seconds, in finishing order.
  std::vector<std::array<double, kTtftParts>> finished_parts_;
  std::int64_t transfers_done_ = 0;
  std::int64_t local_prefills_ = 0;
  std::unordered_set<std::int64_t> local_;  // prefilled locally, until decoded
  double bytes_moved_ = 0;
  double transfer_seconds_ = 0;
};

}  // namespace servesim
