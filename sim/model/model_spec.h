#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/model/dtype.h"

namespace servesim {

// The decoder-only transformer families servesim reads from Hugging Face config.json.
enum class ModelFamily { Llama, Mistral, Mixtral, Qwen2, Opt, Custom };
std::string_view family_name(ModelFamily family) noexcept;

// Gated: SiLU(x W_gate) * (x W_up) W_down, three matrices (Llama and descendants).
// Plain: act(x W_fc1) W_fc2, two matrices (OPT).
enum class MlpKind { Gated, Plain };
enum class NormKind { RmsNorm, LayerNorm };

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

  MlpKind mlp = MlpKind::Gated;
  NormKind norm = NormKind::RmsNorm;
  bool qkv_bias = false;             // bias on the Q, K and V projections (Qwen2, OPT)
  bool output_and_mlp_bias = false;  // bias on O and the MLP matrices (OPT)
  bool tied_embeddings = false;      // LM head shares the token embedding matrix
  // Rows of a learned absolute position embedding (OPT: max positions + 2); 0 for RoPE.
  std::int64_t position_embedding_rows = 0;
  std::optional<std::int64_t> sliding_window_tokens;
  DType native_dtype = DType::BF16;  // config.json "dtype" (or the older "torch_dtype")
  // A quantized checkpoint's method as its quantization_config names it ("quant_method
  // \"awq\"", or "quant_method unknown"). Its pricing is not modelled yet, so the "auto"
  // weight dtype is refused for it (auto_weight_dtype) and an explicit one is used as given.
  std::optional<std::string> quantization;

  bool is_moe() const noexcept { return num_experts > 1; }
  // Query heads sharing one KV head (1 = multi-head attention).
  std::int64_t kv_group() const noexcept { return num_heads / num_kv_heads; }
};

// What the weight dtype "auto" means for `model`: its native dtype. Throws an InputError
// naming the model file and its quantization_config field for a quantized checkpoint, whose
// stored format servesim does not read: the weight dtype must then be given explicitly.
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
