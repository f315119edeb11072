#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/records.h"

namespace servesim::test {

// Latencies are roughly lognormal: median 50 ms, a long right tail (`sigma` of the log).
inline std::vector<double> lognormal_samples(std::size_t n, std::uint64_t seed,
                                             double sigma = 1.0) {
  std::mt19937_64 engine(seed);
  std::lognormal_distribution<double> distribution(std::log(0.05), sigma);
  std::vector<double> samples(n);
  for (auto& sample : samples)
    sample = distribution(engine);
  return samples;
}

inline RequestRecord finished_request(std::int64_t id, double arrival_s, double first_token_s,
                                      double completion_s, std::int64_t prompt_tokens,
                                      std::int64_t output_tokens, std::int32_t preemptions = 0) {
  RequestRecord r;
  r.id = id;
  r.replica = static_cast<std::int32_t>(id % 2);
  r.arrival_s = arrival_s;
  r.first_scheduled_s = arrival_s;
  r.first_token_s = first_token_s;
  r.completion_s = completion_s;
  r.prompt_tokens = prompt_tokens;
  r.output_tokens = output_tokens;
  r.preemptions = preemptions;
  return r;
}

inline RequestRecord rejected_request(std::int64_t id, double arrival_s, std::string reason) {
  RequestRecord r;
  r.id = id;
  r.arrival_s = arrival_s;
  r.prompt_tokens = 4096;
  r.output_tokens = 16;
  r.rejected = true;
  r.reject_reason = std::move(reason);
  return r;
}

inline IterationRecord iteration(std::int32_t replica, double start_s, double duration_s,
                                 std::int32_t batch_size, std::int64_t kv_used_tokens,
                                 std::int64_t kv_capacity_tokens) {
  IterationRecord it;
  it.replica = replica;
  it.start_s = start_s;
  it.duration_s = duration_s;
  it.batch_size = batch_size;
  it.decode_tokens = batch_size;
  it.kv_used_tokens = kv_used_tokens;
  it.kv_capacity_tokens = kv_capacity_tokens;
  return it;
}

// Four completed requests whose statistics are worked out by hand in the tests:
//   id  arrival  first token  completion  prompt  output  ttft  tpot  e2e   preempted
//   1   0        1.0          3.0         100     5       1.0   0.5   3.0   0
//   2   1        1.5          3.5         50      9       0.5   0.25  2.5   2
//   3   2        4.0          4.0         20      1       2.0   -     2.0   1
//   4   3        3.25         6.25        30      4       0.25  1.0   3.25  0
// plus request 5, rejected. Reported out of id order on purpose.
inline void feed_scripted_run(MetricsCollector& collector) {
  collector.on_request_finished(finished_request(2, 1, 1.5, 3.5, 50, 9, 2));
  collector.on_request_finished(finished_request(1, 0, 1.0, 3.0, 100, 5));
  collector.on_request_rejected(rejected_request(5, 2.5, "prompt too long, \"4096\" > 2048"));
  collector.on_request_finished(finished_request(4, 3, 3.25, 6.25, 30, 4));
  collector.on_request_finished(finished_request(3, 2, 4.0, 4.0, 20, 1, 1));
  collector.on_token_gaps(0.5, 4);
  collector.on_token_gaps(0.25, 8);
  collector.on_iteration(iteration(0, 0.0, 1.0, 4, 50, 100));
  collector.on_iteration(iteration(1, 0.0, 3.0, 2, 10, 100));
}

}  // namespace servesim::test
