#pragma once

#include <cstdint>

#include "sim/config/run_config.h"

namespace servesim {

// Sizes one machine cannot simulate, refused before anything is built (exit 3, one line
// naming the key, the limit and why), so that a typo such as --replicas 1000000000 fails at
// once instead of allocating for minutes:
//   replicas                      each holds its own scheduler, allocator and KV block tables,
//                                 built up front
//   workload.num_requests         each request keeps a record for requests.csv and the
//                                 percentiles, and the run is O(requests) in memory
//   workload.lengths prompt and output tokens, and max_len
//                                 beyond any model's positions; a request's tokens are
//                                 counted in 32-bit block tables
//   memory.kv_capacity_tokens     the paged allocator keeps one entry per block, up front
inline constexpr std::int64_t kMaxReplicas = 4096;
inline constexpr std::int64_t kMaxRequests = 100'000'000;
inline constexpr std::int64_t kMaxRequestTokens = std::int64_t{1} << 30;
inline constexpr std::int64_t kMaxKvCapacityTokens = std::int64_t{1} << 36;

// Throws InputError when the configuration passes one of the limits above.
void check_simulation_limits(const RunConfig& config);

}  // namespace servesim
