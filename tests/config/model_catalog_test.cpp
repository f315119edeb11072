#include <catch2/catch.hpp>

#include <fstream>

#include "sim/config/catalog.h"
#include "sim/config/model_catalog.h"
#include "sim/core/error.h"
#include "sim/model/model_size.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("every checkpoint id names a shipped model of the same architecture", "[model][hf_id]") {
  const Catalog catalog(test::source_dir() / "models", "model", "--model");
  for (const CheckpointId& c : checkpoint_ids()) {
    INFO(c.hf_id);
    const ModelSpec base = test::shipped_model(std::string(c.model));
    const ModelSpec m = load_catalog_model(test::source_dir(), c.hf_id, "--model");
    CHECK(m.name == c.hf_id);
    CHECK(m.num_layers == base.num_layers);
    CHECK(m.hidden_size == base.hidden_size);
    CHECK(m.max_position_embeddings == base.max_position_embeddings);
    CHECK(count_parameters(m).total == count_parameters(base).total);
    // No id is also a shipped file's own, and ids are unique (in any case).
    CHECK_FALSE(catalog.find_by_hf_id(c.hf_id));
    CHECK(find_checkpoint(c.hf_id)->model == c.model);
  }
}

TEST_CASE("quantized checkpoints carry their quantization", "[model][hf_id]") {
  const auto load = [](std::string_view id) {
    return load_catalog_model(test::source_dir(), id, "--model");
  };
  const ModelSpec bf16 = load("meta-llama/Llama-3.3-70B-Instruct");
  const ModelSpec fp8 = load("nvidia/Llama-3.3-70B-Instruct-FP8");
  const ModelSpec fp4 = load("NVIDIA/llama-3.3-70b-instruct-fp4");  // any case
  CHECK_FALSE(bf16.quantization);
  REQUIRE(fp8.quantization);
  CHECK(fp8.quantization->dtype == DType::FP8);
  REQUIRE(fp4.quantization);
  CHECK(fp4.quantization->dtype == DType::FP4);
  CHECK(fp4.name == "nvidia/Llama-3.3-70B-Instruct-FP4");
  // FP8 halves the layer matrices' bytes; NVFP4 quarters them and adds one e4m3 scale per 16.
  CHECK(weight_bytes(fp8, DType::FP8) < 0.6 * weight_bytes(bf16, DType::BF16));
  CHECK(weight_bytes(fp4, DType::FP4) < 0.35 * weight_bytes(bf16, DType::BF16));
  const ModelSpec qwen = load("Qwen/Qwen3-8B-FP8");
  REQUIRE(qwen.quantization);
  CHECK(qwen.quantization->group_size == 128 * 128);
}

TEST_CASE("the model flag takes instruct, base and quantized ids, an unknown id the nearest",
          "[model][hf_id]") {
  const auto summary = [](const std::vector<std::string>& model) {
    std::vector<std::string> args = {"run", "--num-requests", "20", "--json", "--model"};
    args.insert(args.end(), model.begin(), model.end());
    const auto r = test::run_servesim(args);
    INFO(Catch::Detail::stringify(model) << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(summary({"meta-llama/Llama-3.1-8B-Instruct"}) == summary({"llama-3.1-8b"}));
  // An FP8 checkpoint (one scale per tensor) is the model run in FP8 weights.
  CHECK(summary({"RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8"}) ==
        summary({"llama-3.1-8b", "--weight-dtype", "fp8"}));
  CHECK(summary({"RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8"}) != summary({"llama-3.1-8b"}));
  test::require_error(
      test::run_servesim({"run", "--model", "meta-llama/Llama-3.1-8B-Instruct-AWQ"}), 3,
      "nearest: meta-llama/Llama-3.1-8B-Instruct");
  test::require_error(test::run_servesim({"run", "--model", "meta-llama/Totally-Different"}), 3,
                      "no shipped model has this Hugging Face id");
  const auto far = test::run_servesim({"run", "--model", "meta-llama/Totally-Different"});
  CHECK_THAT(far.err, Contains("meta-llama/"));
}

TEST_CASE("a model given as a config.json path is named after its folder", "[model][hf_id]") {
  test::ScratchDir dir("model_catalog_folder");
  const auto folder = dir.path() / "my-finetune";
  std::filesystem::create_directories(folder);
  auto config =
      nlohmann::json::parse(test::read_file(test::source_dir() / "models" / "llama-3-8b.json"));
  config.erase("_name_or_path");
  std::ofstream(folder / "config.json") << config.dump();
  CHECK(load_catalog_model(test::source_dir(), (folder / "config.json").string(), "--model").name ==
        "my-finetune");
  CHECK(load_catalog_model(test::source_dir(), folder.string(), "--model").name == "my-finetune");
  // With _name_or_path, that is its name.
  CHECK(load_catalog_model(test::source_dir(),
                           (test::source_dir() / "models" / "llama-3-8b.json").string(), "--model")
            .name == "meta-llama/Meta-Llama-3-8B");
}
