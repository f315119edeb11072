#include <catch2/catch.hpp>

#include "sim/model/kv_spec.h"
#include "sim/model/model_size.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::shipped_model;

namespace {

const KvGroup& group(const std::vector<KvGroup>& groups, KvGroupKind kind) {
  for (const KvGroup& g : groups) {
    if (g.kind == kind) return g;
  }
  FAIL("no group " << kv_group_kind_name(kind));
  return groups.front();
}

}  // namespace

// Published figures: the Hugging Face model pages' safetensors parameter counts (total),
// and the model cards' active counts where they state them.

TEST_CASE("Qwen3 dense: q/k norms counted, 8,190,735,360 and 32,762,123,264 parameters",
          "[model][arch]") {
  const ModelSpec m = shipped_model("qwen3-8b");
  CHECK(m.family == ModelFamily::Qwen3);
  CHECK(m.qk_norm);
  // 36 x (4096 x (4096 + 2 x 1024) + 4096 x 4096 + 2 x 128 + 3 x 4096 x 12288 + 2 x 4096)
  // + 2 x 151936 x 4096 + 4096.
  CHECK(count_parameters(m).total == 8190735360);
  CHECK(count_parameters(shipped_model("qwen3-32b")).total == 32762123264);
  // 36 layers x 8 KV heads x 128 x 2 x 2 B.
  CHECK(kv_bytes_per_token(m, DType::BF16) == 36.0 * 8 * 128 * 2 * 2);
}

TEST_CASE("Qwen3 MoE: 30,532,122,624 total and 3.3 B active, 235,093,634,560 and 22 B",
          "[model][arch]") {
  const ParameterCounts small = count_parameters(shipped_model("qwen3-30b-a3b"));
  CHECK(small.total == 30532122624);
  // 48 x (attention 18,874,624 + 8 experts x 4,718,592 + router 262,144 + norms 4,096)
  // + embeddings, head and final norm 622,331,904 (model card: 3.3 B activated).
  CHECK(small.active == 3353032704);
  const ParameterCounts large = count_parameters(shipped_model("qwen3-235b-a22b"));
  CHECK(large.total == 235093634560);
  CHECK(large.active == Approx(22.0e9).epsilon(0.01));  // "22B activated"
}

TEST_CASE("DeepSeek-V3: MLA, 1 shared + 256 routed experts, 3 dense layers, one MTP layer",
          "[model][arch]") {
  const ModelSpec m = shipped_model("deepseek-v3");
  REQUIRE(m.mla);
  CHECK(m.mla->latent_values_per_token() == 576);
  CHECK_FALSE(m.moe_layer(2));
  CHECK(m.moe_layer(3));
  const ParameterCounts c = count_parameters(m);
  // The 671 B of the paper, exactly: 3 dense layers of 583,483,392, 58 MoE layers of
  // 11,507,286,272, embeddings and head 1,853,358,080 and the final norm.
  CHECK(c.total == 671026419200);
  CHECK(c.active == Approx(37.0e9).epsilon(0.02));  // "37B activated"
  // The MTP module: the checkpoint's 685 B less the 671 B main model.
  CHECK(c.total + c.mtp == Approx(685.0e9).epsilon(0.002));
  // KV: 61 layers x (512 + 64) x 2 B = 70,272 B per token, the same on every TP rank.
  CHECK(kv_bytes_per_token(m, DType::BF16) == 70272.0);
  CHECK(kv_bytes_per_token_per_gpu(m, Parallelism{8, 1}, DType::BF16) == 70272.0);
  CHECK(kv_bytes_per_token(m, DType::FP8) == 61.0 * 576);
  const auto groups = kv_groups(m, DType::BF16);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].kind == KvGroupKind::MlaLatent);
}

TEST_CASE("DeepSeek-V2-Lite: MLA without a query LoRA, 15.7 B total and 2.4 B active",
          "[model][arch]") {
  const nlohmann::json config = {{"model_type", "deepseek_v2"},
                                 {"hidden_size", 2048},
                                 {"num_hidden_layers", 27},
                                 {"num_attention_heads", 16},
                                 {"num_key_value_heads", 16},
                                 {"q_lora_rank", nullptr},
                                 {"kv_lora_rank", 512},
                                 {"qk_nope_head_dim", 128},
                                 {"qk_rope_head_dim", 64},
                                 {"v_head_dim", 128},
                                 {"intermediate_size", 10944},
                                 {"moe_intermediate_size", 1408},
                                 {"n_routed_experts", 64},
                                 {"n_shared_experts", 2},
                                 {"num_experts_per_tok", 6},
                                 {"first_k_dense_replace", 1},
                                 {"moe_layer_freq", 1},
                                 {"vocab_size", 102400},
                                 {"max_position_embeddings", 163840},
                                 {"torch_dtype", "bfloat16"}};
  const ModelSpec m = model_from_hf_config(config, "config.json", "lite");
  const ParameterCounts c = count_parameters(m);
  CHECK(c.total == 15706484224);
  // "2.4B activated": without the embedding table.
  CHECK(static_cast<double>(c.active - c.embedding) == Approx(2.4e9).epsilon(0.03));
  CHECK(kv_bytes_per_token(m, DType::BF16) == 27.0 * 576 * 2);
}

TEST_CASE("gpt-oss: 116.83 B and 20.91 B with MXFP4 experts, windows on every other layer",
          "[model][arch]") {
  const ModelSpec big = shipped_model("gpt-oss-120b");
  REQUIRE(big.quantization);
  CHECK(big.quantization->method == QuantMethod::Mxfp4);
  CHECK(big.quantization->attention_unquantized);
  const ParameterCounts c = count_parameters(big);
  // OpenAI's model card: 116.83 B total, 5.13 B active (which leaves out the embedding).
  CHECK(c.total == 116829156672);
  CHECK(static_cast<double>(c.active - c.embedding) == Approx(5.13e9).epsilon(0.001));
  const ParameterCounts small = count_parameters(shipped_model("gpt-oss-20b"));
  CHECK(static_cast<double>(small.total) == Approx(20.91e9).epsilon(0.0005));
  CHECK(static_cast<double>(small.active - small.embedding) == Approx(3.61e9).epsilon(0.001));
  // Weights: experts at 4.25 bits (an e8m0 scale per 32), the rest bf16: about 65 GB.
  const double experts = static_cast<double>(c.linear_total - c.attention_linear);
  CHECK(weight_bytes(big, auto_weight_dtype(big)) ==
        Approx(experts * (0.5 + 1.0 / 32) + (static_cast<double>(c.total) - experts) * 2));
  CHECK(weight_bytes(big, auto_weight_dtype(big)) == Approx(65.2e9).epsilon(0.005));

  // 18 full and 18 sliding (128-token) layers, each 8 KV heads x 64 x 2 x 2 B = 2,048 B.
  const auto groups = kv_groups(big, DType::BF16);
  REQUIRE(groups.size() == 2);
  CHECK(group(groups, KvGroupKind::FullAttention).layers == 18);
  CHECK(group(groups, KvGroupKind::SlidingWindow).window_tokens == 128);
  CHECK(kv_bytes_per_token(big, DType::BF16) == 18.0 * 2048);
  // At 8,192 tokens, past the window: 18 x 2,048 x 8,192 + 18 x 2,048 x 128.
  CHECK(kv_bytes_for_tokens(groups, 8192) == 18.0 * 2048 * 8192 + 18.0 * 2048 * 128);
  CHECK(kv_bytes_for_tokens(groups, 100) == 36.0 * 2048 * 100);
  CHECK(kv_reserved_bytes_per_sequence(groups) == 18.0 * 2048 * 128);
}

TEST_CASE("Gemma 3: five local layers per global one, 999,885,952 parameters for 1B",
          "[model][arch]") {
  const ModelSpec m = shipped_model("gemma-3-1b");
  CHECK(count_parameters(m).total == 999885952);
  const auto groups = kv_groups(m, DType::BF16);
  // 26 layers: 4 global (layers 6, 12, 18, 24), 22 with a 512-token window; one KV head
  // of 256: 1,024 B per token and layer.
  CHECK(group(groups, KvGroupKind::FullAttention).layers == 4);
  CHECK(group(groups, KvGroupKind::SlidingWindow).layers == 22);
  CHECK(kv_bytes_for_tokens(groups, 32768) == 4.0 * 1024 * 32768 + 22.0 * 1024 * 512);
  // 27B: the language model of the 27.4 B checkpoint (less its 0.4 B SigLIP vision tower).
  const ModelSpec big = shipped_model("gemma-3-27b");
  CHECK(big.num_layers == 62);
  CHECK(count_parameters(big).total == 27009346304);
  CHECK(group(kv_groups(big, DType::BF16), KvGroupKind::FullAttention).layers == 10);
}

TEST_CASE("Llama 4 Scout: 16 experts plus a shared one, chunked attention on 3 of 4 layers",
          "[model][arch]") {
  const ModelSpec m = shipped_model("llama-4-scout");
  const ParameterCounts c = count_parameters(m);
  // The language model of the 109 B checkpoint; 17 B active as its name says.
  CHECK(c.total == 107769861120);
  CHECK(c.active == Approx(17.0e9).epsilon(0.015));
  const auto groups = kv_groups(m, DType::BF16);
  const KvGroup& chunked = group(groups, KvGroupKind::ChunkedLocal);
  CHECK(chunked.layers == 36);
  CHECK(chunked.window_tokens == 8192);
  CHECK(group(groups, KvGroupKind::FullAttention).layers == 12);
  // 10,000 tokens: the chunk in progress holds 10,000 - 8,192 = 1,808 of them.
  const double per_layer = 8.0 * 128 * 2 * 2;
  CHECK(kv_bytes_for_tokens(groups, 10000) == 12 * per_layer * 10000 + 36 * per_layer * 1808);
}

TEST_CASE("Mistral: a window on every layer sizes the cache at W tokens past it", "[model][arch]") {
  const ModelSpec m = shipped_model("mistral-7b");
  const auto groups = kv_groups(m, DType::BF16);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].kind == KvGroupKind::SlidingWindow);
  // No group grows: a slot is priced at the window's bytes per token.
  CHECK(kv_bytes_per_token(m, DType::BF16) == 131072.0);
  CHECK(kv_bytes_for_tokens(groups, 16384) == 131072.0 * 4096);
  CHECK(kv_reserved_bytes_per_sequence(groups) == 0);
  const ModelSpec nemo = shipped_model("mistral-nemo-12b");
  CHECK(count_parameters(nemo).total == 12247782400);
  CHECK(kv_bytes_for_tokens(kv_groups(nemo, DType::BF16), 16384) == 40.0 * 8 * 128 * 4 * 16384);
}

TEST_CASE("Qwen3-Next: Gated DeltaNet layers hold a constant state per sequence", "[model][arch]") {
  const ModelSpec m = shipped_model("qwen3-next-80b-a3b");
  const ParameterCounts c = count_parameters(m);
  CHECK(static_cast<double>(c.total) == Approx(80e9).epsilon(0.01));  // "80B total"
  // NVIDIA's NIM model card (docs.api.nvidia.com, qwen3-next-80b-a3b-instruct): "Active
  // Parameters: 3.9B", to its one decimal (the embedding table included, as here).
  CHECK(static_cast<double>(c.active) == Approx(3.9e9).epsilon(0.0129));
  const auto groups = kv_groups(m, DType::BF16);
  CHECK(group(groups, KvGroupKind::FullAttention).layers == 12);
  const KvGroup& state = group(groups, KvGroupKind::RecurrentState);
  CHECK(state.layers == 36);
  // Per layer: 32 value heads x 128 x 128 state + 3 conv taps x (2 x 2,048 + 4,096), bf16.
  CHECK(state.state_bytes_per_sequence == 36.0 * (32 * 128 * 128 + 3 * 8192) * 2);
  // Full layers: 2 KV heads x 256 x 2 x 2 B each.
  CHECK(kv_bytes_per_token(m, DType::BF16) == 12.0 * 2048);
  CHECK(kv_bytes_for_tokens(groups, 1000) == 12.0 * 2048 * 1000 + state.state_bytes_per_sequence);
  // TP 4 splits the recurrent heads and the 2 KV heads replicate.
  const auto tp4 = kv_groups_per_gpu(m, Parallelism{4, 1}, DType::BF16);
  CHECK(group(tp4, KvGroupKind::RecurrentState).state_bytes_per_sequence ==
        state.state_bytes_per_sequence / 4);
  CHECK(kv_slot_bytes_per_token(tp4) == 12.0 * 1024);
}

TEST_CASE("Llama-3.1/3.3-70B: 70,553,706,496 parameters", "[model][arch]") {
  CHECK(count_parameters(shipped_model("llama-3.1-70b")).total == 70553706496);
  CHECK(count_parameters(shipped_model("llama-3.3-70b")).total == 70553706496);
}
