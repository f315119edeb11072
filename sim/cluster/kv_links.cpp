#include "sim/cluster/kv_links.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {

KvLinks::KvLinks(std::vector<double> sender_bytes_per_s, std::vector<double> receiver_bytes_per_s)
    : sender_bytes_per_s_(std::move(sender_bytes_per_s)),
      receiver_bytes_per_s_(std::move(receiver_bytes_per_s)),
      sending_(sender_bytes_per_s_.size(), 0),
      receiving_(receiver_bytes_per_s_.size(), 0) {
  for (const auto* ports : {&sender_bytes_per_s_, &receiver_bytes_per_s_}) {
    for (const double rate : *ports) {
      if (!(rate >= 0) || !std::isfinite(rate)) {
        throw InputError("kv_transfer", "expected links of finite, non-negative bandwidth");
      }
    }
  }
}

void KvLinks::advance(SimTime now) {
  const double elapsed = (now - updated_).seconds();
  if (elapsed > 0) {
    for (auto& [id, transfer] : active_)
      transfer.bytes_left = std::max(0.0, transfer.bytes_left - transfer.bytes_per_s * elapsed);
  }
  updated_ = now;
}

std::vector<KvLinks::Change> KvLinks::reshare(SimTime now) {
  // Only transfers with bytes still to move share a port; one in its closing latency does not.
  std::fill(sending_.begin(), sending_.end(), 0);
  std::fill(receiving_.begin(), receiving_.end(), 0);
  for (const auto& [id, transfer] : active_) {
    if (transfer.bytes_left <= 0) continue;
    ++sending_[static_cast<std::size_t>(transfer.from)];
    ++receiving_[static_cast<std::size_t>(transfer.to)];
  }
  std::vector<Change> changes;
  for (auto& [id, transfer] : active_) {
    if (transfer.bytes_left <= 0 && transfer.done_at >= now) continue;  // its end is set
    const auto from = static_cast<std::size_t>(transfer.from);
    const auto to = static_cast<std::size_t>(transfer.to);
    transfer.bytes_per_s = 0;
    if (transfer.bytes_left > 0) {
      transfer.bytes_per_s = std::min(sender_bytes_per_s_[from] / sending_[from],
                                      receiver_bytes_per_s_[to] / receiving_[to]);
      if (transfer.max_bytes_per_s > 0) {
        transfer.bytes_per_s = std::min(transfer.bytes_per_s, transfer.max_bytes_per_s);
      }
    }
    const double data_s =
        transfer.bytes_left <= 0 ? 0.0 : transfer.bytes_left / transfer.bytes_per_s;
    const SimTime done = now + SimTime::duration_from_seconds(data_s) + transfer.fixed;
    if (done != transfer.done_at) {
      transfer.done_at = done;
      changes.push_back({id, done});
    }
  }
  return changes;
}

std::vector<KvLinks::Change> KvLinks::start(std::int64_t id, const Leg& leg, SimTime now) {
  if (leg.from < 0 || static_cast<std::size_t>(leg.from) >= sending_.size() || leg.to < 0 ||
      static_cast<std::size_t>(leg.to) >= receiving_.size() || !(leg.bytes >= 0) ||
      !(leg.max_bytes_per_s >= 0) || leg.fixed < SimTime{} || active_.count(id) != 0 ||
      !(sender_bytes_per_s_[static_cast<std::size_t>(leg.from)] > 0) ||
      !(receiver_bytes_per_s_[static_cast<std::size_t>(leg.to)] > 0)) {
    throw InvariantError("kv transfer " + std::to_string(id) + " from port " +
                         std::to_string(leg.from) + " to " + std::to_string(leg.to) +
                         " cannot start");
  }
  advance(now);
  Transfer transfer;
  transfer.from = leg.from;
  transfer.to = leg.to;
  transfer.max_bytes_per_s = leg.max_bytes_per_s;
  transfer.fixed = leg.fixed;
  transfer.bytes_left = leg.bytes;
  transfer.done_at = SimTime::from_ns(-1);
  active_.emplace(id, transfer);
  return reshare(now);
}

std::vector<KvLinks::Change> KvLinks::finish(std::int64_t id, SimTime now) {
  const auto it = active_.find(id);
  if (it == active_.end()) {
    throw InvariantError("kv transfer " + std::to_string(id) + " finished but never started");
  }
  advance(now);
  active_.erase(it);
  return reshare(now);
}

}  // namespace servesim
