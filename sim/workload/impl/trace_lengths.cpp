#include "sim/workload/impl/trace_lengths.h"

#include "sim/core/error.h"

namespace servesim {

TraceLengths::TraceLengths(std::shared_ptr<const Trace> trace) : trace_(std::move(trace)) {}

LengthPair TraceLengths::sample(Rng& /*rng*/) {
  if (next_row_ == trace_->size()) {
    throw InvariantError("trace lengths drawn past the end of " + trace_->source_name);
  }
  if (trace_->has_content()) {
    content_ = std::make_shared<const TokenContent>(trace_->content(next_row_));
  }
  return trace_->lengths[next_row_++];
}

std::optional<std::int64_t> TraceLengths::capacity() const {
  return static_cast<std::int64_t>(trace_->size());
}

}  // namespace servesim
