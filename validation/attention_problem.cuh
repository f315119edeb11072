#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "validation/attention_batch.h"
#include "validation/attention_kernels.cuh"
#include "validation/device_support.cuh"
#include "validation/kv_layout.h"

namespace servesim::validation {

// One attention kernel call on random data, held on host and device: sequences with
// their context lengths, a KV cache laid out contiguously (block_size 0) or paged with
// shuffled blocks, and the queries. The KV cache is copied `kv_sets` times so timed calls
// can rotate through copies that do not fit in L2.
class AttentionProblem {
 public:
  AttentionProblem(ElementType dtype, const HeadShape& heads,
                   std::vector<std::int64_t> context_tokens, std::vector<AttentionQuery> queries,
                   std::int64_t block_size, std::uint64_t seed, bool rotate);

  void launch(std::size_t call) const;  // uses KV copy call % kv_sets()
  // Launches once on copy 0 and compares a spread sample of (query, head) outputs with the
  // CPU reference; throws HarnessFailure naming `what` and the worst element otherwise.
  void verify(const std::string& what) const;
  std::size_t kv_sets() const { return kv_sets_; }

 private:
  AttentionArgs args_for(std::size_t set) const;

  ElementType dtype_;
  HeadShape heads_;
  std::vector<AttentionQuery> queries_;
  KvLayout layout_;
  std::vector<std::uint16_t> q_;
  std::vector<std::uint16_t> k_;
  std::vector<std::uint16_t> v_;
  std::size_t kv_elements_ = 0;
  std::size_t kv_sets_ = 1;
  DeviceBuffer q_device_;
  DeviceBuffer queries_device_;
  DeviceBuffer starts_device_;
  DeviceBuffer table_device_;
  DeviceBuffer k_device_;
  DeviceBuffer v_device_;
  DeviceBuffer out_device_;
};

}  // namespace servesim::validation
