#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cli/command.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

using test::CliResult;

CliResult run(const std::vector<std::string>& args) {
  return test::run_servesim(args);
}

}  // namespace

TEST_CASE("servesim kv reproduces the reference KV arithmetic", "[cli]") {
  auto r = run({"kv", "--layers", "32", "--d-model", "4096", "--tokens", "8192", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["kv_bytes_per_token"] == 524288);
  CHECK(r.json()["kv_bytes"] == 4294967296LL);
  r = run({"kv", "--layers", "32", "--d-model", "4096", "--tokens", "8192", "--kv-group", "8",
           "--json"});
  CHECK(r.json()["kv_bytes"] == 536870912);
  r = run({"kv", "--model", "opt-13b", "--json"});
  CHECK(r.json()["kv_bytes_per_token"] == 819200);
  CHECK_FALSE(r.json().contains("kv_bytes"));
}

TEST_CASE("servesim kv --hw reports capacity and sequences that fit", "[cli]") {
  const auto r =
      run({"kv", "--model", "llama-3-8b", "--hw", "h100-sxm", "--max-len", "8192", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  for (const char* key : {"kv_bytes_per_token", "weight_bytes_per_gpu", "kv_capacity_bytes",
                          "kv_capacity_tokens", "max_sequences_at_max_len"}) {
    INFO(key);
    CHECK(j.contains(key));
  }
  CHECK(j["max_sequences_at_max_len"] == j["kv_capacity_tokens"].get<std::int64_t>() / 8192);
  CHECK(j["weight_bytes_per_gpu"] == 2 * 8030261248LL);
  const auto tp2 = run({"kv", "--model", "llama-3-8b", "--hw", "h100-sxm", "--tp", "2", "--json"});
  CHECK(tp2.json()["kv_capacity_tokens"].get<double>() > 2 * j["kv_capacity_tokens"].get<double>());
}

TEST_CASE("servesim kv prints a readable table with units", "[cli]") {
  const auto r = run({"kv", "--model", "opt-13b", "--hw", "a100-40gb", "--tokens", "2048"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("800.00 KiB") && Contains("819,200 B") && Contains("GiB") &&
                        Contains("tokens"));
}

TEST_CASE("servesim roofline reports operators and totals as JSON", "[cli]") {
  const auto r = run({"roofline", "--model", "llama-2-7b", "--hw", "a100-80gb", "--prefill-tokens",
                      "2048", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  double sum = 0;
  std::vector<std::string> names;
  for (const auto& op : j["operators"]) {
    for (const char* key : {"name", "flops", "bytes", "time_s", "bound"})
      CHECK(op.contains(key));
    sum += op["time_s"].get<double>();
    names.push_back(op["name"]);
  }
  CHECK(j["total_time_s"].get<double>() == Approx(sum));
  CHECK(j["bound"] == "compute");
  CHECK(std::find(names.begin(), names.end(), "attention_prefill") != names.end());
  CHECK(std::find(names.begin(), names.end(), "attention_decode") == names.end());
  const auto decode = run({"roofline", "--decode-batch", "1", "--json"}).json();
  CHECK(decode["bound"] == "memory");
  CHECK(decode["model"] == "meta-llama/Meta-Llama-3-8B");
  // With an engine its host work adds to the step: vllm-v0's 1.18 ms + 43 us per sequence.
  const auto v0 = run({"roofline", "--decode-batch", "1", "--engine", "vllm-v0", "--json"}).json();
  double overhead_s = 0;
  for (const auto& op : v0["operators"]) {
    if (op["name"] == "overhead") overhead_s = op["time_s"].get<double>();
  }
  CHECK(overhead_s == Approx(0.0011791228596040985 + 4.325683241606186e-05));
  CHECK(v0["total_time_s"].get<double>() > decode["total_time_s"].get<double>());
}

TEST_CASE("servesim roofline --generate compares with and without a KV cache", "[cli]") {
  const auto r = run({"roofline", "--generate", "256", "--prefill-tokens", "32", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto g = r.json()["generate"];
  CHECK(g["generated_tokens"] == 256);
  CHECK(g["without_kv_cache"]["flops"].get<double>() >
        50 * g["with_kv_cache"]["flops"].get<double>());
  const auto human = run({"roofline", "--generate", "100"});
  CHECK_THAT(human.out, Contains("with KV cache") && Contains("without (recompute)"));
}

TEST_CASE("every command's help explains its options", "[cli]") {
  const auto top = run({"--help"});
  CHECK(top.exit_code == 0);
  CHECK_THAT(top.out, Contains("kv") && Contains("roofline") && Contains("Exit codes"));
  const auto kv = run({"kv", "--help"});
  CHECK(kv.exit_code == 0);
  for (const char* option :
       {"--model", "--layers", "--d-model", "--heads", "--kv-heads", "--tokens", "--kv-dtype",
        "--kv-group", "--hw", "--tp", "--mem-util", "--max-len", "--json"}) {
    CHECK_THAT(kv.out, Contains(option));
  }
  // kv takes run's flags, with the engine's defaults.
  CHECK_THAT(kv.out, Contains("--engine") && Contains("--max-num-seqs"));
  const auto roofline = run({"roofline", "--help"});
  for (const char* option : {"--decode-batch", "--context", "--prefill-tokens", "--generate"}) {
    CHECK_THAT(roofline.out, Contains(option));
  }
  const auto list = run({"list"});
  CHECK_THAT(list.out, Contains("llama-3.1-405b") && Contains("mi300x") && Contains("H200"));
}

TEST_CASE("bad input gets one line naming the problem and the documented exit code", "[cli]") {
  test::ScratchDir dir("cli_bad");
  test::require_error(run({"kv", "--model", "nope"}), 3, "unknown model \"nope\"");
  test::require_error(run({"kv", "--model", "llama-2-7b", "--hw", "tpu-v9"}), 3,
                      "unknown hardware profile \"tpu-v9\"");
  test::require_error(run({"kv", "--model", "llama-2-7b", "--kv-dtype", "fp12"}), 3,
                      "kv_dtype: unknown dtype \"fp12\"");
  test::require_error(run({"roofline", "--weight-dtype", "int3"}), 3, "--weight-dtype");
  test::require_error(run({"roofline", "--model", "llama-2-7b", "--tp", "3"}), 3,
                      "--tp: tensor-parallel degree 3 does not divide the 32 attention heads");
  test::require_error(run({"kv", "--model", "llama-3-70b", "--hw", "a100-40gb"}), 4,
                      "does not fit");
  test::require_error(run({"kv", "--layers", "0", "--d-model", "4096"}), 3, "--layers");
  test::require_error(run({"kv", "--layers", "32", "--d-model", "4096", "--heads", "30"}), 3,
                      "heads do not divide d_model");
  test::require_error(
      run({"kv", "--layers", "32", "--d-model", "4096", "--heads", "32", "--kv-heads", "5"}), 3,
      "KV heads do not divide 32");
  test::require_error(run({"kv", "--model", "llama-2-7b", "--hw", "h100-sxm", "--mem-util", "0"}),
                      3, "memory.mem_util");
  test::require_error(run({"kv", "--model", "llama-2-7b", "--frobnicate"}), 2, "frobnicate");
  test::require_error(run({"kv", "--model", "llama-2-7b", "--tp", "two"}), 2, "--tp");
  test::require_error(run({"kv"}), 2, "--model");
  test::require_error(run({"teleport"}), 2, "unknown command \"teleport\"");
  const auto broken = dir.write("broken.json", "{\"model_type\": \"llama\",\n\"hidden_size\": }");
  test::require_error(run({"kv", "--model", broken.string()}), 3,
                      broken.string() + ": malformed JSON at line 2");
  const auto negative =
      dir.write("negative.json",
                R"({"model_type": "llama", "num_hidden_layers": -2, "hidden_size": 64,
          "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
          "max_position_embeddings": 256})");
  test::require_error(run({"kv", "--model", negative.string()}), 3,
                      "field \"num_hidden_layers\": expected a positive integer");
  const auto hw = dir.write("hw.json", R"({"name": "X"})");
  test::require_error(run({"kv", "--model", "llama-2-7b", "--hw", hw.string()}), 3,
                      "hw.json: field \"memory_capacity_bytes\": required but missing");
}

TEST_CASE("roofline describes a prefill-only batch without decodes", "[cli]") {
  const auto r = run({"roofline", "--prefill-tokens", "512", "--prefill-context", "1536"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("Batch: one prefill of 512 tokens after 1536 cached\n"));
  CHECK_THAT(r.out, !Contains("decoding sequences"));
  const auto mixed = run({"roofline", "--decode-batch", "2", "--prefill-tokens", "64"});
  CHECK_THAT(mixed.out, Contains("Batch: 2 decoding sequences at 1024 tokens of context, one "
                                 "prefill of 64 tokens after 0 cached"));
}

TEST_CASE("run --help lists the dtype values and the gamma CV flag", "[cli]") {
  const auto help = run({"run", "--help"});
  REQUIRE(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("fp32, bf16, fp16, fp8, int8") && Contains("int4"));
  CHECK_THAT(help.out, Contains("--cv CV"));
}

TEST_CASE("the --cv flag sets the gamma arrivals' coefficient of variation", "[cli]") {
  const std::vector<std::string> base{"run", "--arrival",      "gamma", "--rate",
                                      "8",   "--num-requests", "200",   "--json"};
  auto flag = base;
  flag.insert(flag.end(), {"--cv", "4"});
  auto set = base;
  set.insert(set.end(), {"--set", "workload.arrival.cv=4"});
  const auto with_flag = run(flag);
  REQUIRE(with_flag.exit_code == 0);
  CHECK(with_flag.out == run(set).out);
  CHECK(with_flag.out != run(base).out);  // the preset's CV is not 4
}

TEST_CASE("the run footer's KV capacity is the allocator's, as iterations.csv reports it",
          "[cli]") {
  test::ScratchDir dir("cli_footer");
  const auto out = dir.path() / "out";
  // 100,000 tokens are 1,562 whole blocks of 64 tokens and 32 tokens over.
  const auto r = run({"run", "--num-requests", "5", "--kv-capacity-tokens", "100000",
                      "--block-size", "64", "--out", out.string(), "--no-plots"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("KV capacity 99968 tokens per replica"));
  std::ifstream csv(out / "iterations.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  CHECK_THAT(first, Contains(",99968,"));
}

TEST_CASE("the console counts rejected requests per reason", "[cli]") {
  const auto r =
      run({"run", "--num-requests", "300", "--max-len", "600", "--max-len-policy", "reject"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains(": prompt + output tokens exceed the maximum sequence length (600)"));
  // By default such outputs are cut at max_len instead, and counted.
  const auto cut = run({"run", "--num-requests", "300", "--max-len", "600"});
  REQUIRE(cut.exit_code == 0);
  CHECK_THAT(cut.out, !Contains("prompt + output tokens exceed the maximum sequence length") &&
                          Contains("Requests cut at max_len:"));
  const auto line = cut.out.find("Requests cut at max_len:");
  REQUIRE(line != std::string::npos);
  CHECK(std::stoll(cut.out.substr(line + 24)) > 0);  // the requests cut
}

TEST_CASE("a run that rejects every request is infeasible and writes nothing", "[cli]") {
  test::ScratchDir dir("cli_all_rejected");
  const auto out = dir.path() / "out";
  const auto r = run({"run", "--prompt-tokens", "9000", "--output-tokens", "10", "--num-requests",
                      "20", "--out", out.string()});
  test::require_error(
      r, 4,
      "every one of the 20 requests was rejected, 20 because prompt tokens leave no room for an "
      "output token within the maximum sequence length (8192)");
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("a grid policy error names --grid policy, worded plainly", "[cli]") {
  const auto r = run({"sweep", "--grid", "policy=vllm:pagedx:16", "--num-requests", "10"});
  test::require_error(r, 3,
                      "--grid policy: \"vllm:pagedx:16\": unknown allocator \"pagedx\" (valid: "
                      "paged, contiguous)");
  CHECK_THAT(r.err, !Contains("--policies"));
  CHECK_THAT(run({"compare", "--policies", "vllm"}).err, Contains("--policies: \"vllm\""));
}

TEST_CASE("a quantized config.json is priced in its own format", "[cli]") {
  test::ScratchDir dir("cli_quantized");
  std::ifstream shipped(test::source_dir() / "models" / "llama-2-7b.json");
  nlohmann::json config = nlohmann::json::parse(shipped);
  config["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}};
  const auto path = dir.write("config.json", config.dump());
  const auto kv = run({"kv", "--model", path.string(), "--hw", "a100-80gb", "--json"});
  REQUIRE(kv.exit_code == 0);
  CHECK(kv.json()["weight_dtype"] == "int4");
  CHECK_THAT(kv.json()["quantization"].get<std::string>(), Contains("gptq (int4, groups of 128"));
  CHECK(run({"run", "--model", path.string(), "--num-requests", "5"}).exit_code == 0);
  config["quantization_config"] = {{"quant_method", "squeezellm"}};
  const auto bad = dir.write("bad.json", config.dump());
  test::require_error(run({"kv", "--model", bad.string()}), 3,
                      bad.string() + ": field \"quantization_config.quant_method\"");
}

TEST_CASE("a CUDA engine profile on an AMD GPU runs with a warning that says so", "[cli]") {
  const CliResult amd = test::run_servesim({"run", "--hw", "mi300x", "--num-requests", "10"});
  REQUIRE(amd.exit_code == 0);
  CHECK(amd.err ==
        "servesim: warning: hardware mi300x runs ROCm but engine vllm describes its CUDA build "
        "(graphs, attention kernels, collectives and host costs measured there); treat the "
        "result as a first estimate\n");
  const CliResult nvidia = test::run_servesim({"run", "--hw", "h100-sxm", "--num-requests", "10"});
  REQUIRE(nvidia.exit_code == 0);
  CHECK(nvidia.err.empty());
  // The platform is a profile's key; another value is refused by name.
  nlohmann::json profile =
      nlohmann::json::parse(test::read_file(test::source_dir() / "hw_profiles" / "mi300x.json"));
  CHECK(profile["platform"] == "rocm");
  profile["platform"] = "metal";
  const test::ScratchDir dir("platform");
  const auto path = dir.write("gpu.json", profile.dump());
  test::require_error(test::run_servesim({"run", "--hw", path.string(), "--num-requests", "10"}), 3,
                      "platform");
}
