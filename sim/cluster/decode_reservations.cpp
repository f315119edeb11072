#include "sim/cluster/decode_reservations.h"

#include "sim/core/error.h"

namespace servesim {

KvHandoffOrder parse_kv_handoff_order(const std::string& name, const std::string& field) {
  if (name == "pull_after_prefill") return KvHandoffOrder::PullAfterPrefill;
  if (name == "reserve_before_prefill") return KvHandoffOrder::ReserveBeforePrefill;
  throw InputError(field,
                   "expected pull_after_prefill or reserve_before_prefill, got \"" + name + "\"");
}

std::vector<DecodeReservations::Waiting> DecodeReservations::reserve(std::int32_t decode,
                                                                     Replica& replica) {
  std::vector<Waiting> reserved;
  auto& queue = waiting_[static_cast<std::size_t>(decode)];
  while (!queue.empty() &&
         replica.reserve_kv(queue.front().request->spec.id, queue.front().tokens)) {
    reserved.push_back(queue.front());
    queue.pop_front();
    ++held_;
  }
  return reserved;
}

void DecodeReservations::release(Replica& replica, std::int64_t request) {
  if (held_ == 0) {
    throw InvariantError("request " + std::to_string(request) + " released KV it did not reserve");
  }
  replica.release_reserved_kv(request);
  --held_;
}

std::size_t DecodeReservations::waiting() const {
  std::size_t count = 0;
  for (const auto& queue : waiting_)
    count += queue.size();
  return count;
}

}  // namespace servesim
