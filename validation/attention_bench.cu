// `attention`: decode attention over contiguous and paged KV caches holding the same data,
// and prefill attention under the causal mask after a cached prefix.
#include <cstdint>
#include <string>
#include <vector>

#include "validation/attention_problem.cuh"
#include "validation/harness_commands.cuh"

namespace servesim::validation {
namespace {

std::vector<double> verify_and_time(const AttentionProblem& problem, const std::string& what,
                                    int repeats) {
  problem.verify(what);
  return time_launches(kWarmupCalls, repeats,
                       [&problem](int call) { problem.launch(static_cast<std::size_t>(call)); });
}

}  // namespace

std::vector<Measurement> measure_attention(const HarnessOptions& options,
                                           const AttentionPlan& plan) {
  const std::string device = device_name();
  std::vector<Measurement> measurements;
  const auto add = [&](Measurement m) {
    m.model = plan.shard.model.name;
    m.tp = plan.shard.parallelism.tensor;
    measurements.push_back(std::move(m));
  };
  for (const DecodeAttentionShape& shape : plan.decode) {
    // The same seed for the contiguous and the paged cache: the same keys and values.
    const std::vector<std::int64_t> contexts(static_cast<std::size_t>(shape.batch),
                                             shape.context_tokens);
    const AttentionProblem problem(shape.dtype, shape.heads, contexts, decode_queries(contexts),
                                   shape.block_size, 42, true);
    const std::string what = "decode attention batch " + std::to_string(shape.batch) + " context " +
                             std::to_string(shape.context_tokens) + " block size " +
                             std::to_string(shape.block_size);
    add(make_measurement(device, shape, verify_and_time(problem, what, options.repeats)));
  }
  for (const PrefillAttentionShape& shape : plan.prefill) {
    const auto batch = static_cast<std::size_t>(shape.batch);
    const std::vector<std::int64_t> chunks(batch, shape.chunk_tokens);
    const std::vector<std::int64_t> cached(batch, shape.context_tokens);
    const std::vector<std::int64_t> contexts(batch, shape.context_tokens + shape.chunk_tokens);
    const AttentionProblem problem(shape.dtype, shape.heads, contexts,
                                   prefill_queries(chunks, cached), 0, 43, true);
    const std::string what = "prefill attention chunk " + std::to_string(shape.chunk_tokens) +
                             " context " + std::to_string(shape.context_tokens);
    add(make_measurement(device, shape, verify_and_time(problem, what, options.repeats)));
  }
  return measurements;
}

}  // namespace servesim::validation
