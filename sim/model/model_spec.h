#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/model/dtype.h"
#include "sim/model/quantization.h"

namespace servesim {

// The decoder-only transformer families servesim reads from Hugging Face config.json.
enum class ModelFamily {
  Llama,
  Mistral,
  Mixtral,
  Qwen2,
  Opt,
  Qwen3,
  Qwen3Moe,
  Qwen3Next,
  DeepseekV2,
  DeepseekV3,
  GptOss,
  Gemma3,
  Llama4,
  Custom
};
std::string_view family_name(ModelFamily family) noexcept;

// Gated: SiLU(x W_gate) * (x W_up) W_down, three matrices (Llama and descendants).
// Plain: act(x W_fc1) W_fc2, two matrices (OPT).
enum class MlpKind { Gated, Plain };
enum class NormKind { RmsNorm, LayerNorm };

// How one decoder layer attends, which decides what it keeps in the KV cache:
// Full: every token's K and V (or MLA latent); SlidingWindow: the last sliding_window_tokens;
// ChunkedLocal: the tokens of the current attention chunk (Llama 4); LinearRecurrent: a state
// of constant size per sequence (Gated DeltaNet, Mamba-style layers).
enum class LayerAttention { Full, SlidingWindow, ChunkedLocal, LinearRecurrent };
std::string_view layer_attention_name(LayerAttention kind) noexcept;

// Multi-head latent attention (DeepSeek-V2/V3): K and V are rebuilt from one compressed
// latent of kv_lora_rank values plus a shared rotary key of qk_rope_head_dim values per token.
struct MlaDims {
  std::int64_t q_lora_rank = 0;  // 0: queries projected directly from the hidden state
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  std::int64_t latent_values_per_token() const noexcept { return kv_lora_rank + qk_rope_head_dim; }
};

// A Gated DeltaNet layer (Qwen3-Next): Q and K of num_key_heads x key_head_dim, V of
// num_value_heads x value_head_dim, a causal convolution of conv_kernel taps over Q, K and V,
// and a recurrent state of value heads x key_head_dim x value_head_dim per sequence.
struct LinearAttentionDims {
  std::int64_t num_key_heads = 0;
  std::int64_t num_value_heads = 0;
  std::int64_t key_head_dim = 0;
  std::int64_t value_head_dim = 0;
  std::int64_t conv_kernel = 0;
  std::int64_t key_width() const noexcept { return num_key_heads * key_head_dim; }
  std::int64_t value_width() const noexcept { return num_value_heads * value_head_dim; }
  std::int64_t conv_channels() const noexcept { return 2 * key_width() + value_width(); }
};

// The architecture of one model: immutable after loading and validated by validate_model().
struct ModelSpec {
  std::string name;    // short name or the file's _name_or_path
  std::string source;  // file it was read from, or "command line"
  ModelFamily family = ModelFamily::Custom;

  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;  // d_model
  std::int64_t num_heads = 0;    // query heads
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate_size = 0;  // per expert for mixture-of-experts models
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;

  std::int64_t num_experts = 1;  // 1 = dense MLP
  std::int64_t experts_per_token = 1;
  // Experts every token passes through besides the routed ones (DeepSeek, Llama 4,
  // Qwen3-Next), each shared_expert_intermediate_size wide.
  std::int64_t shared_experts = 0;
  std::int64_t shared_expert_intermediate_size = 0;
  bool shared_expert_gate = false;  // a sigmoid gate (hidden -> 1) on the shared expert
  // Width of the dense MLP of layers that are not MoE in an MoE model (DeepSeek's first
  // layers, Llama 4's interleaved dense layers); 0 = intermediate_size.
  std::int64_t dense_intermediate_size = 0;
  bool router_bias = false;             // a bias per expert on the router (gpt-oss)
  bool router_correction_bias = false;  // DeepSeek-V3's e_score_correction_bias
  bool expert_bias = false;             // biases on every expert's matrices (gpt-oss)

  MlpKind mlp = MlpKind::Gated;
  NormKind norm = NormKind::RmsNorm;
  bool qkv_bias = false;             // bias on the Q, K and V projections (Qwen2, OPT)
  bool o_bias = false;               // bias on the output projection (OPT, gpt-oss)
  bool output_and_mlp_bias = false;  // bias on the MLP matrices (OPT)
  bool tied_embeddings = false;      // LM head shares the token embedding matrix
  // Rows of a learned absolute position embedding (OPT: max positions + 2); 0 for RoPE.
  std::int64_t position_embedding_rows = 0;
  std::optional<std::int64_t> sliding_window_tokens;
  std::optional<std::int64_t> attention_chunk_tokens;  // Llama 4's attention_chunk_size
  // One entry per layer once loaded (empty: every layer Full); see attention_of().
  std::vector<LayerAttention> layer_attention;
  // One entry per layer for MoE models whose MLP differs by layer (empty: every layer MoE
  // when num_experts > 1); see moe_layer().
  std::vector<bool> moe_layers;
  std::optional<MlaDims> mla;
  std::optional<LinearAttentionDims> linear_attention;
  bool qk_norm = false;                // a norm over each query and key head (Qwen3, Gemma 3)
  bool attention_sinks = false;        // one learned sink logit per head (gpt-oss)
  bool attention_output_gate = false;  // queries projected twice as wide, half a gate
  std::int64_t norms_per_layer = 2;    // Gemma 3 has four (pre and post attention and MLP)
  // Multi-token-prediction layers shipped beside the model (DeepSeek-V3's
  // num_nextn_predict_layers): counted apart, not run by the simulator.
  std::int64_t mtp_layers = 0;
  DType native_dtype = DType::BF16;  // config.json "dtype" (or the older "torch_dtype")
  // A quantized checkpoint's quantization_config, read and priced (see quantization.h).
  std::optional<WeightQuantization> quantization;

  bool is_moe() const noexcept { return num_experts > 1; }
  LayerAttention attention_of(std::int64_t layer) const noexcept {
    return layer_attention.empty() ? LayerAttention::Full
                                   : layer_attention[static_cast<std::size_t>(layer)];
  }
  bool moe_layer(std::int64_t layer) const noexcept {
    return is_moe() && (moe_layers.empty() || moe_layers[static_cast<std::size_t>(layer)]);
  }
  std::int64_t dense_mlp_width() const noexcept {
    return dense_intermediate_size > 0 ? dense_intermediate_size : intermediate_size;
  }
  // Query heads sharing one KV head (1 = multi-head attention).
  std::int64_t kv_group() const noexcept { return num_heads / num_kv_heads; }
};

// What the weight dtype "auto" means for `model`: its native dtype, or for a quantized
// checkpoint the format of its quantized matrices (int4 for AWQ/GPTQ 4-bit, fp8, fp4 for
// MXFP4 and NVFP4), whose scales weight_bytes counts from the quantization_config.
DType auto_weight_dtype(const ModelSpec& model);
// What the KV dtype "auto" means for `model`: its native 16-bit format (fp16 for an fp32
// checkpoint, as vLLM does).
DType auto_kv_dtype(const ModelSpec& model);

// Refuses impossible architectures with an InputError naming `where` and the field.
void validate_model(const ModelSpec& model, const std::string& where);

// A model from raw dimensions (the `kv` calculator without a config file). Without heads it
// assumes 128-wide heads when d_model allows, so that kv_group divides the head count.
struct RawModelDims {
  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::optional<std::int64_t> num_heads;
  std::optional<std::int64_t> num_kv_heads;
  std::optional<std::int64_t> kv_group;
  std::int64_t intermediate_size = 0;  // 0 = 4 x d_model
  std::int64_t vocab_size = 32000;
  std::int64_t max_position_embeddings = 2048;
};
ModelSpec model_from_raw_dims(const RawModelDims& dims);

}  // namespace servesim
