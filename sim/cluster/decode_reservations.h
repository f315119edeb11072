#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/cluster/replica.h"
#include "sim/scheduler/request.h"

namespace servesim {

// When a disaggregated deployment's decode side sets aside the KV of a prompt on its way
// (engine.kv_handoff; docs/disaggregation.md, "The hand-off"):
// - PullAfterPrefill (vLLM's NIXL connector, TensorRT-LLM): once the prefill has ended, the
//   decode scheduler allocates the prompt's blocks at its next step, then pulls them; a
//   prompt whose blocks do not fit waits, and so does its transfer.
// - ReserveBeforePrefill (SGLang): the decode side pre-allocates the prompt's blocks before
//   the prefill starts; a request waits for that room before it is prefilled.
enum class KvHandoffOrder { PullAfterPrefill, ReserveBeforePrefill };
KvHandoffOrder parse_kv_handoff_order(const std::string& name, const std::string& field);

// Decode-side KV held for prompts on their way: a reservation is a sequence of its own in the
// decode replica's allocator holding the prompt's tokens the replica's prefix cache does not,
// from when it fits until the KV has arrived. What does not fit waits, first come first
// served on each decode replica (a head that does not fit holds back those behind it, as a
// vLLM scheduler's waiting queue does).
class DecodeReservations {
 public:
  struct Waiting {
    bool prefilled = true;  // the prefill has ended (else it starts once reserved)
    Request* request = nullptr;
    std::int32_t from = 0;  // a prefilled request's prefill replica
    std::int64_t tokens = 0;
  };
  explicit DecodeReservations(std::size_t decode_replicas) : waiting_(decode_replicas) {}

  // `decode` is the index among the decode replicas.
  void wait(std::int32_t decode, const Waiting& waiting) {
    waiting_[static_cast<std::size_t>(decode)].push_back(waiting);
  }
  // Reserves, in order, what now fits on decode replica `decode` (`replica`); returns those
  // reserved.
  std::vector<Waiting> reserve(std::int32_t decode, Replica& replica);
  // The request's KV has arrived on `replica`: its reservation is freed for the scheduler's
  // admission, which allocates the request's own.
  void release(Replica& replica, std::int64_t request);

  std::size_t held() const { return held_; }
  std::size_t waiting() const;
  // Whether room waits on decode replica `decode`.
  bool waiting_on(std::int32_t decode) const {
    return !waiting_[static_cast<std::size_t>(decode)].empty();
  }

 private:
  std::vector<std::deque<Waiting>> waiting_;
  std::size_t held_ = 0;
};

}  // namespace servesim
