#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "sim/workload/workload_source.h"

namespace servesim::test {

// A workload that hands out a fixed list of requests, in order.
class ScriptedSource final : public IWorkloadSource {
 public:
  explicit ScriptedSource(std::vector<RequestSpec> requests) : requests_(std::move(requests)) {}
  std::optional<RequestSpec> next() override {
    if (next_ == requests_.size()) return std::nullopt;
    return requests_[next_++];
  }
  bool exhausted() const override { return next_ == requests_.size(); }

 private:
  std::vector<RequestSpec> requests_;
  std::size_t next_ = 0;
};

}  // namespace servesim::test
