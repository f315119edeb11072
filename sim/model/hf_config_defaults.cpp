#include "sim/model/hf_config_defaults.h"

namespace servesim {

nlohmann::json transformers_config_defaults(ModelFamily family) {
  // Each table is the class's __init__ / dataclass defaults (transformers 4.5x-5.x,
  // src/transformers/models/<type>/configuration_<type>.py).
  switch (family) {
    case ModelFamily::Llama:  // LlamaConfig
      return {{"vocab_size", 32000},
              {"hidden_size", 4096},
              {"intermediate_size", 11008},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"max_position_embeddings", 2048},
              {"tie_word_embeddings", false},
              {"attention_bias", false},
              {"mlp_bias", false}};
    case ModelFamily::Mistral:  // MistralConfig
      return {{"vocab_size", 32000},
              {"hidden_size", 4096},
              {"intermediate_size", 14336},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 8},
              {"max_position_embeddings", 131072},
              {"tie_word_embeddings", false},
              {"sliding_window", 4096}};
    case ModelFamily::Mixtral:  // MixtralConfig (sliding_window None)
      return {{"vocab_size", 32000},
              {"hidden_size", 4096},
              {"intermediate_size", 14336},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 8},
              {"max_position_embeddings", 131072},
              {"tie_word_embeddings", false},
              {"num_experts_per_tok", 2},
              {"num_local_experts", 8}};
    case ModelFamily::Qwen2:  // Qwen2Config (Q, K, V biases are the architecture's, not a key)
      return {{"vocab_size", 151936},
              {"hidden_size", 4096},
              {"intermediate_size", 22016},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 32},
              {"max_position_embeddings", 32768},
              {"tie_word_embeddings", false},
              {"use_sliding_window", false},
              {"sliding_window", 4096}};
    case ModelFamily::Qwen3:  // Qwen3Config
      return {{"vocab_size", 151936},
              {"hidden_size", 4096},
              {"intermediate_size", 22016},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 32},
              {"head_dim", 128},
              {"max_position_embeddings", 32768},
              {"tie_word_embeddings", false},
              {"attention_bias", false},
              {"use_sliding_window", false},
              {"sliding_window", 4096}};
    case ModelFamily::Qwen3Moe:  // Qwen3MoeConfig (no head_dim: hidden_size / heads)
      return {{"vocab_size", 151936},
              {"hidden_size", 2048},
              {"intermediate_size", 6144},
              {"num_hidden_layers", 24},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 4},
              {"max_position_embeddings", 32768},
              {"tie_word_embeddings", false},
              {"attention_bias", false},
              {"use_sliding_window", false},
              {"sliding_window", 4096},
              {"decoder_sparse_step", 1},
              {"moe_intermediate_size", 768},
              {"num_experts_per_tok", 8},
              {"num_experts", 128}};
    case ModelFamily::Qwen3Next:  // Qwen3NextConfig
      return {{"vocab_size", 151936},
              {"hidden_size", 2048},
              {"intermediate_size", 5632},
              {"num_hidden_layers", 48},
              {"num_attention_heads", 16},
              {"num_key_value_heads", 2},
              {"max_position_embeddings", 32768},
              {"tie_word_embeddings", false},
              {"attention_bias", false},
              {"head_dim", 256},
              {"linear_conv_kernel_dim", 4},
              {"linear_key_head_dim", 128},
              {"linear_value_head_dim", 128},
              {"linear_num_key_heads", 16},
              {"linear_num_value_heads", 32},
              {"decoder_sparse_step", 1},
              {"moe_intermediate_size", 512},
              {"shared_expert_intermediate_size", 512},
              {"num_experts_per_tok", 10},
              {"num_experts", 512}};
    case ModelFamily::Opt:  // OPTConfig (hidden_size is its d_model)
      return {{"vocab_size", 50272},     {"hidden_size", 768},
              {"num_hidden_layers", 12}, {"num_attention_heads", 12},
              {"ffn_dim", 3072},         {"max_position_embeddings", 2048},
              {"enable_bias", true},     {"tie_word_embeddings", true}};
    case ModelFamily::DeepseekV2:  // DeepseekV2Config (num_experts_per_tok None: required)
      return {{"vocab_size", 32000},
              {"hidden_size", 4096},
              {"intermediate_size", 11008},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"max_position_embeddings", 2048},
              {"tie_word_embeddings", false},
              {"first_k_dense_replace", 0},
              {"kv_lora_rank", 512},
              {"q_lora_rank", 1536},
              {"n_routed_experts", 64},
              {"n_shared_experts", 2},
              {"qk_nope_head_dim", 128},
              {"qk_rope_head_dim", 64},
              {"v_head_dim", 128},
              {"moe_intermediate_size", 1407},
              {"topk_method", "greedy"}};
    case ModelFamily::DeepseekV3:  // DeepseekV3Config
      return {{"vocab_size", 129280},
              {"hidden_size", 7168},
              {"intermediate_size", 18432},
              {"moe_intermediate_size", 2048},
              {"num_hidden_layers", 61},
              {"num_attention_heads", 128},
              {"num_key_value_heads", 128},
              {"n_shared_experts", 1},
              {"n_routed_experts", 256},
              {"kv_lora_rank", 512},
              {"q_lora_rank", 1536},
              {"qk_rope_head_dim", 64},
              {"v_head_dim", 128},
              {"qk_nope_head_dim", 128},
              {"num_experts_per_tok", 8},
              {"first_k_dense_replace", 3},
              {"max_position_embeddings", 4096},
              {"tie_word_embeddings", false}};
    case ModelFamily::GptOss:  // GptOssConfig
      return {{"num_hidden_layers", 36},
              {"num_local_experts", 128},
              {"vocab_size", 201088},
              {"hidden_size", 2880},
              {"intermediate_size", 2880},
              {"head_dim", 64},
              {"num_attention_heads", 64},
              {"num_key_value_heads", 8},
              {"sliding_window", 128},
              {"tie_word_embeddings", false},
              {"max_position_embeddings", 131072},
              {"num_experts_per_tok", 4},
              {"attention_bias", true}};
    case ModelFamily::Gemma3:  // Gemma3TextConfig
      return {{"vocab_size", 262208},
              {"hidden_size", 2304},
              {"intermediate_size", 9216},
              {"num_hidden_layers", 26},
              {"num_attention_heads", 8},
              {"num_key_value_heads", 4},
              {"head_dim", 256},
              {"max_position_embeddings", 131072},
              {"tie_word_embeddings", true},
              {"attention_bias", false},
              {"sliding_window", 4096},
              {"sliding_window_pattern", 6}};
    case ModelFamily::Llama4:  // Llama4TextConfig
      return {{"vocab_size", 202048},
              {"hidden_size", 5120},
              {"intermediate_size", 8192},
              {"intermediate_size_mlp", 16384},
              {"num_hidden_layers", 48},
              {"num_attention_heads", 40},
              {"num_key_value_heads", 8},
              {"head_dim", 128},
              {"max_position_embeddings", 131072},
              {"tie_word_embeddings", false},
              {"num_experts_per_tok", 1},
              {"num_local_experts", 16},
              {"interleave_moe_layer_step", 1},
              {"no_rope_layer_interval", 4},
              {"attention_chunk_size", 8192},
              {"attention_bias", false}};
    case ModelFamily::Custom:
      break;
  }
  return nlohmann::json::object();
}

nlohmann::json with_config_defaults(const nlohmann::json& config, const nlohmann::json& defaults) {
  nlohmann::json filled = config;
  for (const auto& [key, value] : defaults.items()) {
    // GPT-OSS files may name the routed experts per token experts_per_token.
    if (key == "num_experts_per_tok" && config.contains("experts_per_token")) continue;
    if (!config.contains(key)) filled[key] = value;
  }
  return filled;
}

}  // namespace servesim
