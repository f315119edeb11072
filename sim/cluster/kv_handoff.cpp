#include "sim/cluster/kv_handoff.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"
#include "sim/metrics/latency_stats.h"

namespace servesim {

namespace {

// Every replica's ports, one per link kind: replica r's of kind k at r * kKvLinkKinds + k.
std::vector<double> ports(const std::array<double, kKvLinkKinds>& gpu_bytes_per_s,
                          std::int32_t replicas, std::int64_t gpus) {
  std::vector<double> result;
  for (std::int32_t r = 0; r < replicas; ++r) {
    for (const double gpu : gpu_bytes_per_s)
      result.push_back(gpu * static_cast<double>(gpus));
  }
  return result;
}

}  // namespace

KvHandoff::KvHandoff(KvHandoffOptions options)
    : options_(std::move(options)),
      links_(ports(options_.gpu_bytes_per_s, options_.prefill_replicas, options_.prefill_gpus),
             ports(options_.gpu_bytes_per_s, options_.decode_replicas, options_.decode_gpus)) {
  if (!(options_.bytes_per_token > 0)) {
    throw InputError("kv_transfer", "expected positive KV bytes per token to hand off");
  }
  if (options_.pair_links.size() != static_cast<std::size_t>(options_.prefill_replicas) *
                                        static_cast<std::size_t>(options_.decode_replicas)) {
    throw InvariantError("kv hand-off: expected a link for every pair of replicas");
  }
  for (const KvLinkKind kind : options_.pair_links) {
    if (!(options_.gpu_bytes_per_s[static_cast<std::size_t>(kind)] > 0)) {
      throw InputError("kv_transfer", "expected a link of positive bandwidth");
    }
  }
}

KvLinkKind KvHandoff::link(std::int32_t from, std::int32_t to) const {
  return options_.pair_links[static_cast<std::size_t>(from) *
                                 static_cast<std::size_t>(options_.decode_replicas) +
                             static_cast<std::size_t>(to)];
}

KvLinks::Leg KvHandoff::leg(std::int32_t from, std::int32_t to, double bytes,
                            std::int64_t tokens) const {
  const auto kind = static_cast<std::int32_t>(link(from, to));
  const auto kinds = static_cast<std::int32_t>(kKvLinkKinds);
  KvLinks::Leg leg;
  leg.from = from * kinds + kind;
  leg.to = to * kinds + kind;
  leg.bytes = bytes;
  leg.max_bytes_per_s =
      options_.gpu_bytes_per_s[static_cast<std::size_t>(kind)] *
      static_cast<double>(std::min(options_.prefill_holders, options_.decode_holders));
  // Each receiving GPU reads its blocks' pieces one descriptor each, side by side with the
  // others.
  const std::int64_t blocks = (tokens + options_.block_tokens - 1) / options_.block_tokens;
  leg.fixed = options_.latency +
              SimTime::from_ns(options_.block_overhead.ns() * blocks * options_.pieces_per_block);
  return leg;
}

KvHandoff::Started KvHandoff::start(Request* prefilled, std::int32_t from, std::int32_t to,
                                    std::int64_t cached_tokens, SimTime now) {
  const std::int64_t id = next_transfer_++;
  // The prompt's KV but for the blocks the decode side's prefix cache already holds.
  const std::int64_t tokens = prefilled->spec.prompt_tokens - cached_tokens;
  const double bytes = static_cast<double>(tokens) * options_.bytes_per_token;
  KvLinks::Leg moved = leg(from, to, bytes, tokens);
  // Streaming overlaps the prefill only when the transfer starts as it ends (no wait for the
  // decode side's room).
  if (options_.layerwise && now == prefilled->first_token) {
    // Layer l's KV is ready l/L of the way through the prefill (its compute c per layer) and
    // takes b to send alone: the last byte leaves max(b, L (b - c) + c) after the prefill
    // ends, b when the compute is the longer (every layer but the last hidden), and the link
    // the bound otherwise. What is left moves under the ports' sharing from now on (the
    // sharing during the prefill is not modelled).
    const double rate = moved.max_bytes_per_s;
    const auto layers = static_cast<double>(options_.layers);
    const double b = bytes / layers / rate;
    const double c = (prefilled->first_token - prefilled->first_scheduled).seconds() / layers;
    moved.bytes = std::min(bytes, std::max(b, layers * (b - c) + c) * rate);
  }
  if (link(from, to) == KvLinkKind::Nvlink) ++nvlink_transfers_;
  transfers_.emplace(id, InFlight{prefilled, from, to});
  parts_[prefilled->spec.id] = Parts{prefilled->spec.arrival, prefilled->first_scheduled,
                                     prefilled->first_token, now, SimTime{}};
  bytes_moved_ += bytes;
  return {id, links_.start(id, moved, now)};
}

KvHandoff::Arrived KvHandoff::finish(std::int64_t transfer, SimTime now,
                                     std::vector<KvLinks::Change>& changes) {
  const auto it = transfers_.find(transfer);
  if (it == transfers_.end()) {
    throw InvariantError("kv transfer " + std::to_string(transfer) + " ended twice");
  }
  const InFlight done = it->second;
  transfers_.erase(it);
  changes = links_.finish(transfer, now);
  Parts& parts = parts_.at(done.prefilled->spec.id);
  parts.transfer_end = now;
  ++transfers_done_;
  transfer_seconds_ += (now - parts.transfer_start).seconds();
  return {done.prefilled, done.from, done.to};
}

std::optional<std::array<double, kTtftParts>> KvHandoff::on_decoded(const Request& decoded) {
  const auto it = parts_.find(decoded.spec.id);
  if (it == parts_.end()) {
    if (local_.erase(decoded.spec.id) == 0) {
      throw InvariantError("request " + std::to_string(decoded.spec.id) +
                           " decoded without its hand-off");
    }
    return std::nullopt;
  }
  const Parts& p = it->second;
  const std::array<SimTime, kTtftParts + 1> marks{
      p.arrival,      p.prefill_start,         p.prefill_end,      p.transfer_start,
      p.transfer_end, decoded.first_scheduled, decoded.first_token};
  std::array<double, kTtftParts> seconds{};
  for (std::size_t i = 0; i < kTtftParts; ++i)
    seconds[i] = (marks[i + 1] - marks[i]).seconds();
  finished_parts_.push_back(seconds);
  parts_.erase(it);
  return seconds;
}

DisaggregationSummary KvHandoff::summary(double duration_s) const {
  DisaggregationSummary s;
  for (std::size_t i = 0; i < kTtftParts; ++i) {
    std::vector<double> values;
    values.reserve(finished_parts_.size());
    for (const auto& parts : finished_parts_)
      values.push_back(parts[i]);
    const LatencyStats stats = exact_latency_stats(std::move(values));
    s.mean_s[i] = stats.mean;
    s.p99_s[i] = stats.p99;
    s.total_s[i] = stats.mean * static_cast<double>(finished_parts_.size());
  }
  s.transfers = transfers_done_;
  s.local_prefills = local_prefills_;
  s.expired = expired_;
  s.nvlink_transfers = nvlink_transfers_;
  s.bytes = bytes_moved_;
  s.mean_transfer_s =
      transfers_done_ > 0 ? transfer_seconds_ / static_cast<double>(transfers_done_) : 0.0;
  if (duration_s > 0) {
    // Every transfer ends within the run, so their durations over the run's are the mean
    // number in flight (Little's law).
    s.mean_in_flight = transfer_seconds_ / duration_s;
    // The prefill replicas' ports of the kinds their pairs take.
    double port_bytes_per_s = 0;
    for (std::int32_t p = 0; p < options_.prefill_replicas; ++p) {
      std::array<bool, kKvLinkKinds> takes{};
      for (std::int32_t d = 0; d < options_.decode_replicas; ++d)
        takes[static_cast<std::size_t>(link(p, d))] = true;
      for (std::size_t k = 0; k < kKvLinkKinds; ++k) {
        if (takes[k]) {
          port_bytes_per_s +=
              options_.gpu_bytes_per_s[k] * static_cast<double>(options_.prefill_gpus);
        }
      }
    }
    s.link_utilization = bytes_moved_ / (port_bytes_per_s * duration_s);
  }
  return s;
}

}  // namespace servesim
