#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/model/model_loader.h"
#include "sim/model/model_size.h"
#include "sim/model/quantization.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

WeightQuantization parse(const nlohmann::json& j) {
  return parse_quantization_config(j, "config.json");
}

}  // namespace

TEST_CASE("quantization_config methods are priced with their scales", "[model][quant]") {
  // AWQ int4, group 128: 4 bits + an fp16 scale and a 4-bit zero per 128 elements.
  const auto awq = parse({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}});
  CHECK(awq.dtype == DType::INT4);
  CHECK(awq.bytes_per_parameter() == Approx(0.5 + 2.5 / 128));
  const auto gptq8 = parse({{"quant_method", "gptq"}, {"bits", 8}, {"group_size", -1}});
  CHECK(gptq8.dtype == DType::INT8);
  CHECK(gptq8.bytes_per_parameter() == 1.0);  // per channel: scales not counted
  // FP8 block-wise (DeepSeek-V3): one fp32 scale per 128 x 128 block; per tensor: none.
  const auto block = parse({{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}});
  CHECK(block.bytes_per_parameter() == Approx(1 + 4.0 / 16384));
  CHECK(parse({{"quant_method", "fp8"}}).bytes_per_parameter() == 1.0);
  // MXFP4: e8m0 per 32 (4.25 bits); NVFP4: e4m3 per 16 (4.5 bits).
  CHECK(parse({{"quant_method", "mxfp4"}}).bytes_per_parameter() == Approx(4.25 / 8));
  const auto nvfp4 = parse({{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}});
  CHECK(nvfp4.dtype == DType::FP4);
  CHECK(nvfp4.bytes_per_parameter() == Approx(4.5 / 8));
  CHECK_THROWS_WITH(parse({{"quant_method", "awq"}, {"bits", 3}}),
                    Contains("field \"quantization_config.bits\": expected 4"));
  CHECK_THROWS_WITH(
      parse({{"quant_method", "bitsandbytes"}}),
      Contains("unknown quantization method \"bitsandbytes\"") && Contains("awq, gptq, fp8"));
}

TEST_CASE("DeepSeek-V3's fp8 checkpoint weighs its block-scaled matrices and bf16 rest",
          "[model][quant]") {
  const ModelSpec m = test::shipped_model("deepseek-v3");
  REQUIRE(auto_weight_dtype(m) == DType::FP8);
  const ParameterCounts c = count_parameters(m);
  const double linear = static_cast<double>(c.linear_total);
  CHECK(weight_bytes(m, DType::FP8) ==
        Approx(linear * (1 + 4.0 / 16384) + static_cast<double>(c.total - c.linear_total) * 2));
  // An explicit dtype other than the checkpoint's quantizes every matrix without scales.
  CHECK(weight_bytes(m, DType::INT4) ==
        Approx(linear * 0.5 + static_cast<double>(c.total - c.linear_total) * 2));
}

TEST_CASE("bad model configs: one line naming file and field, exit 3", "[model][quant]") {
  test::ScratchDir dir("model_bad_arch");
  const auto kv = [&](const std::string& text) {
    return test::run_servesim({"kv", "--model", dir.write("config.json", text).string()});
  };
  // A key whose configuration class default is None where servesim needs a value (docs/
  // models.md, "Missing fields"): DeepSeek-V2's routed experts per token.
  const std::string moe_head =
      R"({"model_type": "deepseek_v2", "hidden_size": 256, "num_hidden_layers": 2,
          "num_attention_heads": 4, "q_lora_rank": 64, "kv_lora_rank": 64,
          "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32,
          "intermediate_size": 512, "moe_intermediate_size": 128, "n_routed_experts": 8,
          "vocab_size": 1000, "max_position_embeddings": 4096)";
  const auto no_rank = kv(moe_head + "}");
  CHECK(no_rank.exit_code == 3);
  CHECK_THAT(no_rank.err, Contains("config.json") && Contains("field \"num_experts_per_tok\"") &&
                              Contains("required but missing"));
  CHECK(kv(moe_head + R"(, "num_experts_per_tok": 2})").exit_code == 0);

  const auto window = kv(R"({"model_type": "mistral", "hidden_size": 256, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 512,
             "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": 8192})");
  CHECK(window.exit_code == 3);
  CHECK_THAT(window.err, Contains("field \"sliding_window\"") &&
                             Contains("exceeds max_position_embeddings 4096"));

  const auto method = kv(R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
             "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000,
             "max_position_embeddings": 4096, "quantization_config": {"quant_method": "eetq"}})");
  CHECK(method.exit_code == 3);
  CHECK_THAT(method.err,
             Contains("field \"quantization_config.quant_method\"") && Contains("\"eetq\""));
  for (const auto* r : {&no_rank, &window, &method}) {
    CHECK(r->out.empty());
    CHECK(std::count(r->err.begin(), r->err.end(), '\n') == 1);
  }
}

TEST_CASE("a snapshot folder holding config.json is taken by --model", "[model]") {
  test::ScratchDir dir("model_snapshot");
  std::filesystem::create_directories(dir.path() / "Qwen3-8B");
  std::filesystem::copy_file(test::source_dir() / "models" / "qwen3-8b.json",
                             dir.path() / "Qwen3-8B" / "config.json");
  const auto by_folder =
      test::run_servesim({"kv", "--model", (dir.path() / "Qwen3-8B").string(), "--json"});
  INFO(by_folder.err);
  REQUIRE(by_folder.exit_code == 0);
  const auto by_name = test::run_servesim({"kv", "--model", "Qwen/Qwen3-8B", "--json"});
  REQUIRE(by_name.exit_code == 0);
  CHECK(by_folder.json()["kv_bytes_per_token"] == by_name.json()["kv_bytes_per_token"]);
  CHECK(by_folder.json()["parameters_total"] == 8190735360);
  const auto empty = test::run_servesim({"kv", "--model", dir.path().string()});
  CHECK(empty.exit_code == 3);
  CHECK_THAT(empty.err, Contains("must hold config.json"));
}
