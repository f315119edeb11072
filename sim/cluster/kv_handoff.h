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

// The link a hand-off takes between a prefill and a decode replica: each GPU's network port,
// or NVLink when both replicas sit in one node.
enum class KvLinkKind : std::uint8_t { Nic, Nvlink };
inline constexpr std::size_t kKvLinkKinds = 2;

// What a hand-off moves and over what.
struct KvHandoffOptions {
  // The KV bytes that land on the decode side per prompt token: what its GPUs holding a
  // request's KV hold of one token together (kv_bytes_per_token_held of the decode role).
  double bytes_per_token = 0;
  // One GPU's bandwidth per direction, per link kind (KvLinkKind order; 0 for a kind no pair
  // takes). A replica's port of a kind is its GPUs' links together; one transfer moves over
  // at most the links of the GPUs that hold its KV on either side.
  std::array<double, kKvLinkKinds> gpu_bytes_per_s{};
  std::int64_t prefill_gpus = 1;  // per replica
  std::int64_t decode_gpus = 1;
  std::int64_t prefill_holders = 1;  // GPUs holding one request's KV: TP x PP of one DP rank
  std::int64_t decode_holders = 1;
  std::int32_t prefill_replicas = 1;
  std::int32_t decode_replicas = 1;
  // The link from prefill replica p to decode replica d, at [p * decode_replicas + d].
  std::vector<KvLinkKind> pair_links;
  SimTime latency;  // per transfer
  // Per block piece each receiving GPU reads (block_tokens tokens of one sending GPU's shard);
  // a block comes in `pieces_per_block` pieces when the prefill side cuts the KV finer than
  // the decode side (its TP larger).
  SimTime block_overhead;
  std::int64_t block_tokens = 16;
  std::int64_t pieces_per_block = 1;
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

  // The prefill side dropped the KV of request `request` before the decode side read it (the
  // abort timeout): the decode side computes the prompt itself, with no transfer.
  void on_expired(std::int64_t request) {
    ++expired_;
    local_.insert(request);
  }

  std::size_t in_flight() const { return links_.in_flight(); }
  // Means and p99s of the TTFT parts over the finished requests, and the transfers' totals
  // and (over a run of `duration_s`) their mean number in flight and the links' utilization.
  DisaggregationSummary summary(double duration_s) const;

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
  KvLinkKind link(std::int32_t from, std::int32_t to) const;
  // The ports of a kind: prefill replica p's at p * kKvLinkKinds + kind, decode replica d's
  // likewise.
  KvLinks::Leg leg(std::int32_t from, std::int32_t to, double bytes, std::int64_t tokens) const;

  KvHandoffOptions options_;
  KvLinks links_;
  std::int64_t next_transfer_ = 0;
  std::unordered_map<std::int64_t, InFlight> transfers_;  // by transfer id
  std::unordered_map<std::int64_t, Parts> parts_;         // by request id, until decoded
  // The finished requests' parts, in seconds, in finishing order.
  std::vector<std::array<double, kTtftParts>> finished_parts_;
  std::int64_t transfers_done_ = 0;
  std::int64_t local_prefills_ = 0;
  std::int64_t expired_ = 0;
  std::int64_t nvlink_transfers_ = 0;
  // Prefilled locally or after the KV expired (no TTFT parts), until decoded.
  std::unordered_set<std::int64_t> local_;
  double bytes_moved_ = 0;
  double transfer_seconds_ = 0;
};

}  // namespace servesim
