// `replay`: the batch shapes of a servesim run's iterations.csv executed with real kernels for
// every layer of the model's shard, measured against the simulator's predicted durations.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "validation/attention_problem.cuh"
#include "validation/gemm_runner.cuh"
#include "validation/harness_commands.cuh"
#include "validation/layer_kernels.cuh"

namespace servesim::validation {
namespace {

// One decoder layer's weights, random and scaled by 1/sqrt(k) so activations stay O(1)
// through every layer. A mixture of experts keeps every expert's MLP matrices.
struct LayerWeights {
  DeviceBuffer qkv;
  DeviceBuffer o;
  DeviceBuffer up;
  DeviceBuffer down;
};

// The per-layer GEMM shapes of a model shard, for one token count.
struct LayerShapes {
  GemmShape qkv, o, up, down;
  ExpertSplit experts;
};

LayerShapes layer_shapes(const ModelShard& shard, std::int64_t tokens, ElementType dtype) {
  const auto gemms = layer_gemms(shard, tokens, dtype);
  return {gemms[0], gemms[1], gemms[2], gemms[3], split_over_experts(shard, tokens)};
}

DeviceBuffer random_matrix(std::int64_t rows, std::int64_t cols, std::int64_t copies,
                           ElementType dtype, std::uint64_t seed) {
  const auto count = static_cast<std::size_t>(rows * cols * copies);
  DeviceBuffer buffer(count * 2);
  fill_random(buffer.data(), count, dtype, seed, 1.0f / std::sqrt(static_cast<float>(cols)));
  return buffer;
}

// Activations of the largest replayed batch.
struct Activations {
  DeviceBuffer x, x_norm, qkv, attention, o, up, act, down, logits;
};

// Checks every kernel the replay runs on small inputs with the model's dimensions.
void verify_replay_kernels(const GemmRunner& runner, const ModelShard& shard,
                           const HarnessOptions& options) {
  for (const GemmShape& g : layer_gemms(shard, 8, options.dtype))
    verify_gemm(runner, g);
  verify_gemm(runner, lm_head_gemm(shard, 8, options.dtype));
  const ShardShape& s = shard.shard;
  verify_layer_kernels(options.dtype, s.hidden, s.intermediate, shard.model.mlp == MlpKind::Gated);
  const std::vector<std::int64_t> contexts{37, 100};
  AttentionProblem(options.dtype, head_shape(shard), contexts, decode_queries(contexts),
                   options.block_size, 44, false)
      .verify("replay decode attention");
  AttentionProblem(
      options.dtype, head_shape(shard), contexts,
      prefill_queries(std::vector<std::int64_t>{17, 60}, std::vector<std::int64_t>{20, 40}),
      options.block_size, 45, false)
      .verify("replay prefill attention");
}

}  // namespace

std::vector<Measurement> replay_iterations(const HarnessOptions& options, const ReplayPlan& plan) {
  const ModelShard& shard = plan.shard;
  const ShardShape& s = shard.shard;
  const ElementType dtype = options.dtype;
  const GemmRunner runner;
  verify_replay_kernels(runner, shard, options);

  std::int64_t max_tokens = 1;
  std::int64_t max_sampled = 1;
  for (const IterationRow& row : plan.iterations) {
    max_tokens = std::max(max_tokens, row.shape.tokens());
    max_sampled = std::max(max_sampled, row.shape.sampled_sequences);
  }
  const LayerShapes widest = layer_shapes(shard, max_tokens, dtype);
  const bool gated = shard.model.mlp == MlpKind::Gated;
  const std::int64_t q_width = s.heads * s.head_dim;
  const std::int64_t experts = std::max<std::int64_t>(1, s.experts);
  // Every pipeline stage in turn, as the simulator's duration_s counts them: the largest
  // stage's layers times the number of stages.
  const std::int64_t layers = s.layers * shard.parallelism.pipeline;

  // Distinct copies of the layer weights, enough that no layer finds its weights in L2.
  const auto layer_bytes = static_cast<std::size_t>(
      2 * (widest.qkv.n * widest.qkv.k + widest.o.n * widest.o.k +
           experts * (widest.up.n * widest.up.k + widest.down.n * widest.down.k)));
  const std::size_t weight_sets = std::min(
      rotation_sets(layer_bytes), static_cast<std::size_t>(std::max<std::int64_t>(2, s.layers)));
  std::vector<LayerWeights> weights;
  for (std::size_t i = 0; i < weight_sets; ++i) {
    const std::uint64_t seed = 1000 + 10 * i;
    weights.push_back({random_matrix(widest.qkv.n, widest.qkv.k, 1, dtype, seed),
                       random_matrix(widest.o.n, widest.o.k, 1, dtype, seed + 1),
                       random_matrix(widest.up.n, widest.up.k, experts, dtype, seed + 2),
                       random_matrix(widest.down.n, widest.down.k, experts, dtype, seed + 3)});
  }
  const DeviceBuffer lm_head = random_matrix(s.vocab, s.hidden, 1, dtype, 7);

  const auto rows = [&](std::int64_t width) {
    return static_cast<std::size_t>(max_tokens * width * 2);
  };
  Activations a{DeviceBuffer(rows(s.hidden)),
                DeviceBuffer(rows(s.hidden)),
                DeviceBuffer(rows(widest.qkv.n)),
                DeviceBuffer(rows(q_width)),
                DeviceBuffer(rows(s.hidden)),
                DeviceBuffer(rows(widest.up.n)),
                DeviceBuffer(rows(s.intermediate)),
                DeviceBuffer(rows(s.hidden)),
                DeviceBuffer(static_cast<std::size_t>(max_sampled * s.vocab * 2))};

  const std::string device = device_name();
  std::vector<Measurement> measurements;
  for (const IterationRow& row : plan.iterations) {
    const BatchShape& shape = row.shape;
    const std::int64_t tokens = shape.tokens();
    const LayerShapes g = layer_shapes(shard, tokens, dtype);
    const GemmShape head = lm_head_gemm(shard, shape.sampled_sequences, dtype);

    // The batch's sequences, prefill chunks first, and their KV cache.
    const ReplaySequences seqs = replay_sequences(shape);
    std::vector<std::int64_t> contexts;
    for (std::size_t i = 0; i < seqs.prefill_chunk_tokens.size(); ++i)
      contexts.push_back(seqs.prefill_cached_tokens[i] + seqs.prefill_chunk_tokens[i]);
    contexts.insert(contexts.end(), seqs.decode_context_tokens.begin(),
                    seqs.decode_context_tokens.end());
    std::vector<AttentionQuery> queries =
        prefill_queries(seqs.prefill_chunk_tokens, seqs.prefill_cached_tokens);
    for (AttentionQuery q : decode_queries(seqs.decode_context_tokens)) {
      q.sequence += static_cast<std::int32_t>(seqs.prefill_chunk_tokens.size());
      queries.push_back(q);
    }
    const KvLayout layout = options.block_size > 0
                                ? KvLayout::paged(contexts, options.block_size, row.line)
                                : KvLayout::contiguous(contexts);
    const auto kv_count = static_cast<std::size_t>(layout.total_rows() * s.kv_heads * s.head_dim);
    const DeviceBuffer k(kv_count * 2);
    const DeviceBuffer v(kv_count * 2);
    fill_random(k.data(), kv_count, dtype, 11);
    fill_random(v.data(), kv_count, dtype, 12);
    fill_random(a.x.data(), static_cast<std::size_t>(tokens * s.hidden), dtype, 13);
    const DeviceBuffer queries_device = upload(queries);
    const DeviceBuffer starts_device = upload(layout.sequence_start_rows());
    const DeviceBuffer table_device = upload(layout.block_table());

    AttentionArgs attention;
    attention.dtype = dtype;
    attention.heads = head_shape(shard);
    attention.q = a.qkv.data();  // Q is the first q_width columns of the QKV output
    attention.q_row_stride = g.qkv.n;
    attention.queries = queries_device.as<AttentionQuery>();
    attention.num_queries = static_cast<std::int64_t>(queries.size());
    attention.k = k.data();
    attention.v = v.data();
    attention.kv = {layout.block_size(), starts_device.as<std::int64_t>(),
                    table_device.as<std::int32_t>(), layout.max_blocks_per_sequence()};
    attention.out = a.attention.data();

    const auto forward = [&](int /*call*/) {
      for (std::int64_t layer = 0; layer < layers; ++layer) {
        const LayerWeights& w = weights[static_cast<std::size_t>(layer) % weights.size()];
        launch_rms_norm(dtype, a.x.data(), a.x_norm.data(), tokens, s.hidden);
        runner.run(g.qkv, a.x_norm.data(), w.qkv.data(), a.qkv.data());
        launch_attention(attention);
        runner.run(g.o, a.attention.data(), w.o.data(), a.o.data());
        launch_add(dtype, a.x.data(), a.o.data(), tokens * s.hidden);
        launch_rms_norm(dtype, a.x.data(), a.x_norm.data(), tokens, s.hidden);
        // Each active expert runs its MLP on its share of the tokens (uniform routing).
        for (std::int64_t e = 0; e < g.experts.active_experts; ++e) {
          const auto up_offset = static_cast<std::size_t>(e * g.up.n * g.up.k * 2);
          const auto down_offset = static_cast<std::size_t>(e * g.down.n * g.down.k * 2);
          runner.run(g.up, a.x_norm.data(), w.up.data() + up_offset, a.up.data());
          launch_activation(dtype, a.up.data(), a.act.data(), g.up.m, s.intermediate, gated);
          runner.run(g.down, a.act.data(), w.down.data() + down_offset, a.down.data());
        }
        launch_add(dtype, a.x.data(), a.down.data(), g.down.m * s.hidden);
      }
      launch_rms_norm(dtype, a.x.data(), a.x_norm.data(), tokens, s.hidden);
      if (head.m > 0) runner.run(head, a.x_norm.data(), lm_head.data(), a.logits.data());
    };
    const std::vector<double> samples_s = time_launches(1, options.repeats, forward);
    Measurement m = make_measurement(
        device, IterationRecord{shard.parallelism.pipeline, shape, row.predicted_s}, samples_s);
    m.model = shard.model.name;
    m.tp = shard.parallelism.tensor;
    measurements.push_back(std::move(m));
  }
  return measurements;
}

}  // namespace servesim::validation
