#include <catch2/catch.hpp>

#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "sim/model/model_size.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("CodeLlama-34B has its config.json dimensions and 33.7 B parameters", "[model]") {
  const ModelSpec m = test::shipped_model("codellama-34b");
  CHECK(m.name == "codellama/CodeLlama-34b-Instruct-hf");
  CHECK(m.num_layers == 48);
  CHECK(m.hidden_size == 8192);
  CHECK(m.num_heads == 64);
  CHECK(m.num_kv_heads == 8);
  CHECK(m.intermediate_size == 22016);
  CHECK(m.vocab_size == 32000);
  CHECK(m.max_position_embeddings == 16384);
  CHECK(m.native_dtype == DType::BF16);
  // 48 x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 22016 + 2 x 8192) + 2 x 32000 x 8192 + 8192
  // = 33,743,970,304: the checkpoint's seven safetensors shards hold 67.49 GB of bf16.
  const ParameterCounts counts = count_parameters(m);
  CHECK(counts.total == 33743970304);
  CHECK(counts.active == counts.total);
  // 48 layers x 8 KV heads x 128 x 2 (K and V) x 2 B.
  CHECK(kv_bytes_per_token(m, DType::BF16) == 196608.0);
}

TEST_CASE("the model catalog resolves Hugging Face ids to the shipped files", "[model]") {
  const Catalog catalog(test::source_dir() / "models", "model", "--model");
  CHECK(catalog.resolve("meta-llama/Llama-2-7b-hf").filename() == "llama-2-7b.json");
  CHECK(catalog.resolve("meta-llama/Llama-2-70b-hf").filename() == "llama-2-70b.json");
  CHECK(catalog.resolve("mistralai/Mixtral-8x7B-v0.1").filename() == "mixtral-8x7b.json");
  CHECK(catalog.resolve("codellama/CodeLlama-34b-Instruct-hf").filename() == "codellama-34b.json");
  CHECK(catalog.resolve("META-LLAMA/llama-2-7b-HF").filename() == "llama-2-7b.json");
  // Every shipped model answers to its own id.
  for (const auto& name : catalog.names()) {
    INFO(name);
    const ModelSpec m = test::shipped_model(name);
    REQUIRE(m.name.find('/') != std::string::npos);
    CHECK(catalog.resolve(m.name).filename() == name + ".json");
  }
  CHECK_THROWS_WITH(catalog.resolve("meta-llama/Llama-9-7b-hf"),
                    Contains("meta-llama/Llama-9-7b-hf") && Contains("file not found") &&
                        Contains("no shipped model has this Hugging Face id"));
  // A path that names a file is never taken for an id.
  CHECK_THROWS_WITH(catalog.resolve("meta-llama/Llama-2-7b-hf.json"),
                    Contains("file not found") && !Contains("Hugging Face"));
  CHECK_THROWS_WITH(catalog.resolve("a/meta-llama/Llama-2-7b-hf"), !Contains("Hugging Face"));
}

TEST_CASE("the --model flag takes a Hugging Face id", "[model]") {
  const auto by_id = test::run_servesim({"kv", "--model", "codellama/CodeLlama-34b-Instruct-hf"});
  const auto by_name = test::run_servesim({"kv", "--model", "codellama-34b"});
  INFO(by_id.err);
  REQUIRE(by_id.exit_code == 0);
  CHECK(by_id.out == by_name.out);
  CHECK_THAT(by_id.out, Contains("196,608"));
}
