// A config.json without a field is read as transformers' configuration class reads it: the
// class's default (docs/models.md, "Missing fields"), or the file is refused where the class
// has none that servesim could use.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/model/hf_config_defaults.h"
#include "sim/model/kv_spec.h"
#include "sim/model/model_loader.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A shipped model's config.json without `keys`, loaded from a scratch file.
ModelSpec shipped_without(const std::string& name, const std::vector<std::string>& keys) {
  nlohmann::json config =
      nlohmann::json::parse(test::read_file(test::source_dir() / "models" / (name + ".json")));
  for (const auto& key : keys) {
    REQUIRE(config.contains(key));
    config.erase(key);
  }
  const test::ScratchDir dir("hf_defaults_" + name);
  return load_model_file(dir.write("config.json", config.dump()));
}

ModelSpec load(const nlohmann::json& config) {
  const test::ScratchDir dir("hf_defaults");
  return load_model_file(dir.write("config.json", config.dump()));
}

}  // namespace

TEST_CASE("a Qwen3 config without head_dim takes Qwen3Config's 128", "[model]") {
  const ModelSpec model = shipped_without("qwen3-32b", {"head_dim"});
  CHECK(model.head_dim == 128);
  // 64 layers x 2 (K, V) x 8 KV heads x 128 x 2 bytes: not hidden / heads (80).
  CHECK(model.hidden_size / model.num_heads == 80);
  CHECK(kv_bytes_per_token(model, DType::BF16) == 64.0 * 2 * 8 * 128 * 2);
  CHECK(kv_bytes_per_token(model, DType::BF16) == 262144);
}

TEST_CASE("missing fields take the class's default, derived ones derive as transformers does",
          "[model]") {
  // MistralConfig defaults num_key_value_heads to 8, not to the attention heads.
  CHECK(shipped_without("mistral-7b", {"num_key_value_heads"}).num_kv_heads == 8);
  // LlamaConfig defaults it to None: the attention heads.
  CHECK(shipped_without("llama-3-8b", {"num_key_value_heads"}).num_kv_heads == 32);
  // Qwen2Config: no sliding window unless use_sliding_window says so (false by default).
  const ModelSpec qwen2 = shipped_without("qwen2.5-7b", {"use_sliding_window"});
  CHECK_FALSE(qwen2.sliding_window_tokens);
  // OPTConfig ties the embeddings by default.
  CHECK(shipped_without("opt-13b", {"tie_word_embeddings"}).tied_embeddings);
}

TEST_CASE("a field the class defaults to None where servesim needs a value is refused", "[model]") {
  // DeepseekV2Config routes to its 64 experts by default but has no num_experts_per_tok.
  const nlohmann::json v2 = {{"model_type", "deepseek_v2"}};
  REQUIRE_THROWS_WITH(load(v2), Contains("num_experts_per_tok") && Contains("required"));
  nlohmann::json routed = v2;
  routed["num_experts_per_tok"] = 6;
  const ModelSpec model = load(routed);
  CHECK(model.num_experts == 64);
  CHECK(model.hidden_size == 4096);
  CHECK(model.mla->kv_lora_rank == 512);
}

TEST_CASE("the defaults fill absent keys only", "[model]") {
  const nlohmann::json defaults = transformers_config_defaults(ModelFamily::Qwen3);
  CHECK(defaults["head_dim"] == 128);
  const nlohmann::json filled =
      with_config_defaults({{"head_dim", nullptr}, {"hidden_size", 5120}}, defaults);
  CHECK(filled["head_dim"].is_null());
  CHECK(filled["hidden_size"] == 5120);
  CHECK(filled["vocab_size"] == 151936);
  // GPT-OSS's experts_per_token stands for num_experts_per_tok.
  const nlohmann::json gpt_oss = with_config_defaults(
      {{"experts_per_token", 2}}, transformers_config_defaults(ModelFamily::GptOss));
  CHECK_FALSE(gpt_oss.contains("num_experts_per_tok"));
}
