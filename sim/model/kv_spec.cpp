#include "sim/model/kv_spec.h"

#include <algorithm>
#include <array>

namespace servesim {
namespace {

constexpr std::size_t kKinds = 5;

KvGroupKind group_of(const ModelSpec& m, LayerAttention attention) {
  switch (attention) {
    case LayerAttention::SlidingWindow:
      return KvGroupKind::SlidingWindow;
    case LayerAttention::ChunkedLocal:
      return KvGroupKind::ChunkedLocal;
    case LayerAttention::LinearRecurrent:
      return KvGroupKind::RecurrentState;
    case LayerAttention::Full:
      break;
  }
  return m.mla ? KvGroupKind::MlaLatent : KvGroupKind::FullAttention;
}

// The groups of layers [begin, end) with `kv_heads` KV heads and a TP degree `tp`.
std::vector<KvGroup> groups_of_layers(const ModelSpec& m, std::int64_t begin, std::int64_t end,
                                      std::int64_t kv_heads, std::int64_t tp, DType kv_dtype) {
  const double b = bytes_per_element(kv_dtype);
  // Recurrent states stay in the model's 16-bit format (vLLM's mamba cache dtype "auto").
  const double state_b = m.native_dtype == DType::FP32 ? 4.0 : 2.0;
  std::array<std::int64_t, kKinds> layers{};
  for (std::int64_t i = begin; i < end; ++i) {
    layers[static_cast<std::size_t>(group_of(m, m.attention_of(i)))] += 1;
  }
  std::vector<KvGroup> groups;
  for (std::size_t k = 0; k < kKinds; ++k) {
    if (layers[k] == 0) continue;
    KvGroup g;
    g.kind = static_cast<KvGroupKind>(k);
    g.layers = layers[k];
    const double n = static_cast<double>(g.layers);
    switch (g.kind) {
      case KvGroupKind::FullAttention:
      case KvGroupKind::SlidingWindow:
      case KvGroupKind::ChunkedLocal:
        g.bytes_per_token = n * 2.0 * static_cast<double>(kv_heads * m.head_dim) * b;
        break;
      case KvGroupKind::MlaLatent:
        g.bytes_per_token = n * static_cast<double>(m.mla->latent_values_per_token()) * b;
        break;
      case KvGroupKind::RecurrentState: {
        const LinearAttentionDims& d = *m.linear_attention;
        const double state =
            static_cast<double>(d.num_value_heads / tp * d.key_head_dim * d.value_head_dim);
        const double conv = static_cast<double>((d.conv_kernel - 1) * (d.conv_channels() / tp));
        g.state_bytes_per_sequence = n * (state + conv) * state_b;
        break;
      }
    }
    if (g.kind == KvGroupKind::SlidingWindow) g.window_tokens = m.sliding_window_tokens.value_or(0);
    if (g.kind == KvGroupKind::ChunkedLocal) g.window_tokens = m.attention_chunk_tokens.value_or(0);
    groups.push_back(g);
  }
  return groups;
}

bool any_grows(const std::vector<KvGroup>& groups) noexcept {
  return std::any_of(groups.begin(), groups.end(), [](const KvGroup& g) { return g.grows(); });
}

bool windowed(const KvGroup& g) noexcept {
  return g.kind == KvGroupKind::SlidingWindow || g.kind == KvGroupKind::ChunkedLocal;
}

}  // namespace

std::string_view kv_group_kind_name(KvGroupKind kind) noexcept {
  switch (kind) {
    case KvGroupKind::FullAttention:
      return "full_attention";
    case KvGroupKind::SlidingWindow:
      return "sliding_window";
    case KvGroupKind::ChunkedLocal:
      return "chunked_local";
    case KvGroupKind::MlaLatent:
      return "mla_latent";
    case KvGroupKind::RecurrentState:
      return "recurrent_state";
  }
  return "?";
}

double KvGroup::bytes(std::int64_t tokens) const noexcept {
  if (tokens <= 0) return 0;
  switch (kind) {
    case KvGroupKind::FullAttention:
    case KvGroupKind::MlaLatent:
      return bytes_per_token * static_cast<double>(tokens);
    case KvGroupKind::SlidingWindow:
      return bytes_per_token * static_cast<double>(std::min(tokens, window_tokens));
    case KvGroupKind::ChunkedLocal:
      // The tokens of the chunk the last token is in.
      return bytes_per_token * static_cast<double>((tokens - 1) % window_tokens + 1);
    case KvGroupKind::RecurrentState:
      return state_bytes_per_sequence;
  }
  return 0;
}

double KvGroup::max_bytes_per_sequence() const noexcept {
  if (windowed(*this)) return bytes_per_token * static_cast<double>(window_tokens);
  if (kind == KvGroupKind::RecurrentState) return state_bytes_per_sequence;
  return 0;
}

std::vector<KvGroup> kv_groups(const ModelSpec& model, DType kv_dtype) {
  return groups_of_layers(model, 0, model.num_layers, model.num_kv_heads, 1, kv_dtype);
}

std::vector<KvGroup> kv_groups_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                       DType kv_dtype) {
  const ShardShape s = shard_model(model, parallelism);
  std::vector<KvGroup> best;
  double best_bytes = -1;
  for (std::int64_t stage = 0; stage < parallelism.pipeline; ++stage) {
    const std::int64_t begin = stage * s.layers;
    const std::int64_t end = std::min(model.num_layers, begin + s.layers);
    if (begin >= end) continue;
    std::vector<KvGroup> groups =
        groups_of_layers(model, begin, end, s.kv_heads, parallelism.tensor, kv_dtype);
    const double bytes = kv_slot_bytes_per_token(groups) + kv_reserved_bytes_per_sequence(groups);
    if (bytes > best_bytes) {
      best_bytes = bytes;
      best = std::move(groups);
    }
  }
  return best;
}

double kv_slot_bytes_per_token(const std::vector<KvGroup>& groups) noexcept {
  const bool grows = any_grows(groups);
  double bytes = 0;
  for (const KvGroup& g : groups) {
    if (g.grows() || (!grows && windowed(g))) bytes += g.bytes_per_token;
  }
  return bytes;
}

double kv_reserved_bytes_per_sequence(const std::vector<KvGroup>& groups) noexcept {
  const bool grows = any_grows(groups);
  double bytes = 0;
  for (const KvGroup& g : groups) {
    if (g.kind == KvGroupKind::RecurrentState || (grows && windowed(g))) {
      bytes += g.max_bytes_per_sequence();
    }
  }
  return bytes;
}

double kv_bytes_for_tokens(const std::vector<KvGroup>& groups, std::int64_t tokens) noexcept {
  double bytes = 0;
  for (const KvGroup& g : groups)
    bytes += g.bytes(tokens);
  return bytes;
}

double kv_bytes_per_token(const ModelSpec& model, DType kv_dtype) {
  return kv_slot_bytes_per_token(kv_groups(model, kv_dtype));
}

double kv_bytes_per_token_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                  DType kv_dtype) {
  return kv_slot_bytes_per_token(kv_groups_per_gpu(model, parallelism, kv_dtype));
}

double kv_bytes_per_token_held(const ModelSpec& model, const Parallelism& parallelism,
                               DType kv_dtype) {
  const ShardShape s = shard_model(model, parallelism);
  // Every stage's layers once (each on its own GPUs), each GPU of a stage with its share.
  return static_cast<double>(parallelism.tensor) *
         kv_slot_bytes_per_token(groups_of_layers(model, 0, model.num_layers, s.kv_heads,
                                                  parallelism.tensor, kv_dtype));
}

std::int64_t kv_tensor_shards(const ModelSpec& model, std::int64_t tensor) {
  if (model.mla) return 1;
  return std::max<std::int64_t>(1, std::min(tensor, model.num_kv_heads));
}

}  // namespace servesim
