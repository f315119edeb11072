#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/model/dtype.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"

namespace servesim {

// What a group of layers keeps per sequence, each kind with its own rule:
//   FullAttention   K and V of every token: 2 x KV heads x head_dim x bytes per token and layer
//   SlidingWindow   the same for the last window_tokens tokens only
//   ChunkedLocal    the same for the tokens of the current attention chunk (at most
//                   window_tokens)
//   MlaLatent       one latent of kv_lora_rank + qk_rope_head_dim values per token and layer,
//                   shared by all heads and replicated on every TP rank
//   RecurrentState  a constant state per sequence and layer (linear attention: value heads x
//                   key_head_dim x value_head_dim, plus conv_kernel - 1 taps of the convolved
//                   Q, K and V), held in the model's 16-bit format whatever the KV dtype
enum class KvGroupKind { FullAttention, SlidingWindow, ChunkedLocal, MlaLatent, RecurrentState };
std::string_view kv_group_kind_name(KvGroupKind kind) noexcept;

struct KvGroup {
  KvGroupKind kind = KvGroupKind::FullAttention;
  std::int64_t layers = 0;
  std::int64_t window_tokens = 0;       // SlidingWindow: W; ChunkedLocal: the chunk size
  double bytes_per_token = 0;           // over the group's layers; 0 for RecurrentState
  double state_bytes_per_sequence = 0;  // RecurrentState, over the group's layers

  // Groups whose memory grows with the sequence without bound.
  bool grows() const noexcept {
    return kind == KvGroupKind::FullAttention || kind == KvGroupKind::MlaLatent;
  }
  // Bytes one sequence of `tokens` tokens holds in this group.
  double bytes(std::int64_t tokens) const noexcept;
  // The most a sequence ever holds in a group that does not grow (0 for those that do).
  double max_bytes_per_sequence() const noexcept;
};

// The model's layer groups (one per kind present, in the order above), whole model.
std::vector<KvGroup> kv_groups(const ModelSpec& model, DType kv_dtype);
// The groups one GPU holds: its KV heads (replicated when TP exceeds the KV head count; the
// MLA latent on every rank; recurrent heads split) of the layers of its pipeline stage. With
// PP the stage with the most bytes per token counts.
std::vector<KvGroup> kv_groups_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                       DType kv_dtype);

// Bytes per token of the groups that grow without bound (full attention, MLA latent); for a
// model none of whose groups grows (every layer windowed), of its windowed groups. For a model
// of one full-attention or MLA group this is the size of one token slot of the simulation's
// allocator; models of several groups are cut into block pools (memory/kv_pool_layout.h).
double kv_slot_bytes_per_token(const std::vector<KvGroup>& groups) noexcept;
// Bytes every sequence holds beyond its slots: the windowed and chunked groups at their full
// window, and the recurrent states (0 for the windowed groups of a model priced by them).
double kv_reserved_bytes_per_sequence(const std::vector<KvGroup>& groups) noexcept;
// Sum of bytes(tokens) over the groups.
double kv_bytes_for_tokens(const std::vector<KvGroup>& groups, std::int64_t tokens) noexcept;

// kv_slot_bytes_per_token of the whole model, and of one GPU.
double kv_bytes_per_token(const ModelSpec& model, DType kv_dtype);
double kv_bytes_per_token_per_gpu(const ModelSpec& model, const Parallelism& parallelism,
                                  DType kv_dtype);

// What the tensor x pipeline GPUs that hold one sequence's KV hold of each of its tokens
// together: kv_slot_bytes_per_token of each GPU's share, summed. The whole model's once when
// every GPU holds KV heads of its own; more when TP exceeds the KV heads (replicated heads) and
// for MLA (the latent on every TP rank). What a disaggregated decode replica receives per
// handed-off token.
double kv_bytes_per_token_held(const ModelSpec& model, const Parallelism& parallelism,
                               DType kv_dtype);
// The distinct pieces a TP degree cuts each layer's KV into: the KV heads' groups (at most the
// KV heads), 1 for MLA's latent, which every rank holds whole.
std::int64_t kv_tensor_shards(const ModelSpec& model, std::int64_t tensor);

}  // namespace servesim
