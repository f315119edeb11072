#pragma once

#include <cstddef>
#include <memory>

#include "sim/workload/length_distribution.h"
#include "sim/workload/trace_reader.h"

namespace servesim {

// A trace's (prompt, output) pairs in row order; combined with the same trace's arrivals,
// request i gets row i's arrival and lengths.
class TraceLengths final : public ILengthDistribution {
 public:
  explicit TraceLengths(std::shared_ptr<const Trace> trace);
  // Beyond capacity() is an invariant error: the workload source stops at capacity().
  LengthPair sample(Rng& rng) override;
  std::optional<std::int64_t> capacity() const override;
  // The last row's content when the trace says what its prompts are made of (Mooncake).
  std::shared_ptr<const TokenContent> last_content() const override { return content_; }

 private:
  std::shared_ptr<const Trace> trace_;
  std::size_t next_row_ = 0;
  std::shared_ptr<const TokenContent> content_;
};

}  // namespace servesim
