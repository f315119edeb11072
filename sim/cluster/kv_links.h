#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sim/core/sim_time.h"

namespace servesim {

// The links that carry KV caches from prefill replicas to decode replicas. Each port has
// `bytes_per_s` per direction (a replica's GPUs' NICs, or their NVLinks, together); a transfer
// runs from a sender port to a receiver port, and the transfers a port carries share it
// evenly: a transfer moves at the least of its two shares and its own ceiling (the GPUs that
// hold its KV), recomputed at every start and finish. A transfer ends its fixed time after its
// last byte leaves (the per-transfer cost of setting it up and of the completion notice, and
// per-block overheads). Two transfers that start together on one port each take twice as long
// as one alone.
class KvLinks {
 public:
  // A port of no bandwidth is one no transfer may take.
  KvLinks(std::vector<double> sender_bytes_per_s, std::vector<double> receiver_bytes_per_s);

  struct Leg {
    std::int32_t from = 0;  // sender port
    std::int32_t to = 0;    // receiver port
    double bytes = 0;
    double max_bytes_per_s = 0;  // the transfer's own ceiling; 0: none
    SimTime fixed;               // added after the last byte
  };

  // A transfer whose end time changed, with that time.
  struct Change {
    std::int64_t transfer = 0;
    SimTime done_at;
  };
  // Starts transfer `id` at `now`. Returns every transfer whose end time it changes, the new
  // one included, in id order.
  std::vector<Change> start(std::int64_t id, const Leg& leg, SimTime now);
  // Transfer `id` has ended at `now` (its end time as last returned): the others speed up.
  std::vector<Change> finish(std::int64_t id, SimTime now);
  std::size_t in_flight() const { return active_.size(); }

 private:
  struct Transfer {
    std::int32_t from = 0;
    std::int32_t to = 0;
    double max_bytes_per_s = 0;
    SimTime fixed;
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
  SimTime updated_;
  std::map<std::int64_t, Transfer> active_;
};

}  // namespace servesim
