#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sim/core/sim_time.h"

namespace servesim {

// The links that carry KV caches from prefill replicas to decode replicas. Each replica has
// one port of `bytes_per_s` per direction (its GPUs' NICs, or NVLink, together); a transfer
// runs from a prefill replica's port to a decode replica's, and the transfers a port carries
// share it evenly: a transfer moves at the lesser of its two shares, recomputed at every start
// and finish. A transfer ends `latency` after its last byte leaves (the per-transfer cost of
// setting it up and of the completion notice). Two transfers that start together on one port
// each take twice as long as one alone.
class KvLinks {
 public:
  KvLinks(std::vector<double> sender_bytes_per_s, std::vector<double> receiver_bytes_per_s,
          SimTime latency);

  // A transfer whose end time changed, with that time.
  struct Change {
    std::int64_t transfer = 0;
    SimTime done_at;
  };
  // Starts transfer `id` of `bytes` from sender port `from` to receiver port `to` at `now`.
  // Returns every transfer whose end time it changes, the new one included, in id order.
  std::vector<Change> start(std::int64_t id, std::int32_t from, std::int32_t to, double bytes,
                            SimTime now);
  // Transfer `id` has ended at `now` (its end time as last returned): the others speed up.
  std::vector<Change> finish(std::int64_t id, SimTime now);
  std::size_t in_flight() const { return active_.size(); }

 private:
  struct Transfer {
    std::int32_t from = 0;
    std::int32_t to = 0;
    double bytes_left = 0;
    double bytes_per_s = 0;
    SimTime done_at;
  };
  void advance(SimTime now);
  std::vector<Change> reshare(SimTime now);

  std::vector<double> sender_bytes_per_s_;
  std::vector<double> receiver_bytes_per_s_;
  // Transfers moving bytes, per sender and per receiver port (counted at every reshare).
  std::vector<std::int32_t> sending_;
  std::vector<std::int32_t> receiving_;
  SimTime latency_;
  SimTime updated_;
  std::map<std::int64_t, Transfer> active_;
};

}  // namespace servesim
