#include <catch2/catch.hpp>

#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "sim/model/model_loader.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

struct Expected {
  const char* name;
  std::int64_t layers, hidden, heads, kv_heads, intermediate, vocab, max_positions, experts;
};

// The Hugging Face config.json values from the shared reference table.
constexpr Expected kShipped[] = {
    {"llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, 1},
    {"llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 4096, 1},
    {"llama-2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, 1},
    {"llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, 1},
    {"llama-3.1-8b", 32, 4096, 32, 8, 14336, 128256, 131072, 1},
    {"llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, 1},
    {"llama-3.1-405b", 126, 16384, 128, 8, 53248, 128256, 131072, 1},
    {"mistral-7b", 32, 4096, 32, 8, 14336, 32000, 32768, 1},
    {"mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 32768, 8},
    {"qwen2-72b", 80, 8192, 64, 8, 29568, 152064, 131072, 1},
    {"qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, 131072, 1},
    {"opt-13b", 40, 5120, 40, 40, 20480, 50272, 2048, 1},
    {"opt-66b", 64, 9216, 72, 72, 36864, 50272, 2048, 1},
    {"opt-175b", 96, 12288, 96, 96, 49152, 50272, 2048, 1},
};

ModelSpec load_text(const test::ScratchDir& dir, const std::string& text) {
  return load_model_file(dir.write("config.json", text));
}

}  // namespace

TEST_CASE("every shipped model loads with its reference dimensions", "[model]") {
  for (const auto& e : kShipped) {
    INFO(e.name);
    const ModelSpec m = test::shipped_model(e.name);
    CHECK(m.num_layers == e.layers);
    CHECK(m.hidden_size == e.hidden);
    CHECK(m.num_heads == e.heads);
    CHECK(m.num_kv_heads == e.kv_heads);
    CHECK(m.intermediate_size == e.intermediate);
    CHECK(m.vocab_size == e.vocab);
    CHECK(m.max_position_embeddings == e.max_positions);
    CHECK(m.num_experts == e.experts);
    CHECK(m.head_dim * m.num_heads == m.hidden_size);
  }
  const Catalog catalog(test::source_dir() / "models", "model", "--model");
  REQUIRE(catalog.names().size() >= std::size(kShipped));
}

TEST_CASE("family-specific fields are read", "[model]") {
  const ModelSpec mixtral = test::shipped_model("mixtral-8x7b");
  REQUIRE(mixtral.family == ModelFamily::Mixtral);
  REQUIRE(mixtral.experts_per_token == 2);
  REQUIRE(test::shipped_model("mistral-7b").sliding_window_tokens == 4096);
  const ModelSpec qwen = test::shipped_model("qwen2.5-7b");
  REQUIRE(qwen.qkv_bias);
  REQUIRE_FALSE(qwen.sliding_window_tokens.has_value());  // use_sliding_window is false
  const ModelSpec opt = test::shipped_model("opt-13b");
  REQUIRE(opt.mlp == MlpKind::Plain);
  REQUIRE(opt.norm == NormKind::LayerNorm);
  REQUIRE(opt.tied_embeddings);
  REQUIRE(opt.native_dtype == DType::FP16);
}

TEST_CASE("the catalog resolves short names case-insensitively and lists unknown ones", "[model]") {
  const Catalog catalog(test::source_dir() / "models", "model", "--model");
  REQUIRE(catalog.resolve("LLAMA-2-7B").filename() == "llama-2-7b.json");
  REQUIRE_THROWS_WITH(catalog.resolve("llama-9"),
                      Contains("unknown model \"llama-9\"") && Contains("opt-13b"));
  REQUIRE_THROWS_WITH(catalog.resolve("no/such/config.json"), Contains("file not found"));
}

TEST_CASE("config.json files of other architectures are refused naming the field", "[model]") {
  test::ScratchDir dir("model_arch");
  REQUIRE_THROWS_WITH(load_text(dir, R"({"model_type": "gpt2", "n_layer": 12})"),
                      Contains("config.json") && Contains("field \"model_type\"") &&
                          Contains("\"gpt2\" is not supported"));
  REQUIRE_THROWS_WITH(load_text(dir, R"({"architectures": ["FalconForCausalLM"]})"),
                      Contains("field \"architectures\""));
  REQUIRE_THROWS_WITH(load_text(dir, R"({"hidden_size": 4096})"),
                      Contains("field \"model_type\": required but missing"));
}

TEST_CASE("impossible dimensions are refused naming the field", "[model]") {
  test::ScratchDir dir("model_dims");
  const std::string head = R"({"model_type": "llama", "num_hidden_layers": 32, )";
  const std::string tail =
      R"("intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096})";
  REQUIRE_NOTHROW(load_text(
      dir, head + R"("hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, )" +
               tail));
  REQUIRE_THROWS_WITH(
      load_text(dir, head + R"("hidden_size": 4096, "num_attention_heads": 30, )" + tail),
      Contains("field \"num_attention_heads\"") && Contains("do not divide hidden_size 4096"));
  REQUIRE_THROWS_WITH(
      load_text(
          dir, head +
                   R"("hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 6, )" +
                   tail),
      Contains("field \"num_key_value_heads\"") && Contains("do not divide 32"));
  REQUIRE_THROWS_WITH(
      load_text(dir, head + R"("hidden_size": -4096, "num_attention_heads": 32, )" + tail),
      Contains("field \"hidden_size\"") && Contains("positive"));
  // A missing hidden_size is LlamaConfig's default (docs/models.md, "Missing fields").
  CHECK(load_text(dir, head + R"("num_attention_heads": 32, )" + tail).hidden_size == 4096);
  REQUIRE_THROWS_WITH(
      load_text(dir, head + R"("hidden_size": "4096", "num_attention_heads": 32, )" + tail),
      Contains("expected a number, got string"));
  REQUIRE_THROWS_WITH(load_text(dir, head + R"("hidden_size": 4096,)"),
                      Contains("config.json: malformed JSON at line 1"));
}

TEST_CASE("mixtral checks its expert counts", "[model]") {
  test::ScratchDir dir("model_moe");
  const std::string base =
      R"({"model_type": "mixtral", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
          "vocab_size": 100,
          "max_position_embeddings": 256, )";
  // A missing num_experts_per_tok is MixtralConfig's 2.
  CHECK(load_text(dir, base + R"("num_local_experts": 8})").experts_per_token == 2);
  REQUIRE_THROWS_WITH(load_text(dir, base + R"("num_local_experts": 2, "num_experts_per_tok": 3})"),
                      Contains("exceeds the 2 experts"));
}

TEST_CASE("the dtype key of newer configs is read, and wins over torch_dtype", "[model]") {
  test::ScratchDir dir("model_dtype");
  const std::string llama =
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
          "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000,
          "max_position_embeddings": 512)";
  CHECK(load_text(dir, llama + R"(, "dtype": "bfloat16"})").native_dtype == DType::BF16);
  CHECK(load_text(dir, llama + R"(, "torch_dtype": "float32"})").native_dtype == DType::FP32);
  CHECK(load_text(dir, llama + R"(, "dtype": "float32", "torch_dtype": "float16"})").native_dtype ==
        DType::FP32);
  REQUIRE_THROWS_WITH(load_text(dir, llama + R"(, "dtype": "float7"})"),
                      Contains("field \"dtype\": unknown dtype \"float7\""));
}

TEST_CASE("a quantized checkpoint's weight dtype is its quantized format", "[model]") {
  test::ScratchDir dir("model_quantized");
  const std::string llama =
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
          "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000,
          "max_position_embeddings": 512, "torch_dtype": "float16")";
  const ModelSpec plain = load_text(dir, llama + "}");
  CHECK_FALSE(plain.quantization);
  CHECK(auto_weight_dtype(plain) == DType::FP16);
  const ModelSpec awq = load_text(
      dir,
      llama + R"(, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}})");
  REQUIRE(awq.quantization);
  CHECK(auto_weight_dtype(awq) == DType::INT4);
  REQUIRE_THROWS_WITH(load_text(dir, llama + R"(, "quantization_config": {}})"),
                      Contains("config.json: field \"quantization_config.quant_method\"") &&
                          Contains("required but missing"));
  REQUIRE_THROWS_WITH(
      load_text(dir, llama + R"(, "quantization_config": {"quant_method": "hqq"}})"),
      Contains("field \"quantization_config.quant_method\": unknown quantization method \"hqq\""));
}
