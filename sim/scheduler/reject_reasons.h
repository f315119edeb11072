#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/memory/kv_cache_allocator.h"
#include "sim/workload/workload_source.h"

namespace servesim {

// Reasons a request can never be served, worded alike by every policy that checks them.

// Its prompt + output tokens do not fit the replica's KV cache even when it is empty.
std::optional<std::string> kv_capacity_reject_reason(const RequestSpec& request,
                                                     const IKvCacheAllocator& allocator);

// Its prompt + output tokens exceed a per-iteration prefill limit: a request preempted by
// recompute re-prefills its prompt and every generated token in one iteration, so a
// request that could outgrow the limit might never resume. `limit_name` names the option.
std::optional<std::string> prefill_limit_reject_reason(const RequestSpec& request,
                                                       std::int64_t limit_tokens,
                                                       const std::string& limit_name);

}  // namespace servesim
