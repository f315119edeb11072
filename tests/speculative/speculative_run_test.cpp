#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using namespace servesim;

namespace {

const std::string kNgram3 = R"({"method": "ngram", "num_speculative_tokens": 3})";

nlohmann::json summary_of(const std::filesystem::path& dir) {
  return nlohmann::json::parse(test::read_file(dir / "summary.json"));
}

// One column of a CSV file, by name.
std::vector<double> column(const std::filesystem::path& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::size_t index = 0;
  {
    std::stringstream head(line);
    std::size_t i = 0;
    bool found = false;
    for (std::string cell; std::getline(head, cell, ','); ++i) {
      if (cell == name) {
        index = i;
        found = true;
      }
    }
    REQUIRE(found);
  }
  std::vector<double> values;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    for (std::size_t i = 0; i <= index; ++i)
      std::getline(row, cell, ',');
    values.push_back(std::stod(cell));
  }
  return values;
}

test::CliResult run(const std::filesystem::path& out, std::vector<std::string> args) {
  std::vector<std::string> all = {"run",        "--out", out.string(), "--model",
                                  "llama-3-8b", "--hw",  "h100-sxm"};
  all.insert(all.end(), args.begin(), args.end());
  const test::CliResult r = test::run_servesim(all);
  INFO(r.err);
  return r;
}

}  // namespace

TEST_CASE(
    "one request at a time: tokens per step follow the formula and TPOT is step time "
    "over them",
    "[speculative]") {
  test::ScratchDir dir("spec_one_at_a_time");
  const double a = 0.7;
  // Eight requests far apart: each runs alone, about 12,600 verification steps in all.
  const auto r = run(dir.path(), {"--arrival", "constant", "--rate", "0.01", "--num-requests", "8",
                                  "--prompt-tokens", "128", "--output-tokens", "4000",
                                  "--speculative-config", kNgram3, "--acceptance-rate", "0.7"});
  REQUIRE(r.exit_code == 0);
  const nlohmann::json s = summary_of(dir.path());
  const nlohmann::json& d = s.at("spec_decode");
  REQUIRE(d.at("verification_steps").get<std::int64_t>() > 10000);
  const double expected = (1 - std::pow(a, 4)) / (1 - a);
  CHECK(d.at("mean_tokens_per_step").get<double>() == Approx(expected).epsilon(0.01));
  // Accepted over proposed: (tokens per step - 1) / k.
  CHECK(d.at("acceptance_rate").get<double>() == Approx((expected - 1) / 3).epsilon(0.015));
  CHECK(d.at("proposing_share").get<double>() == 0);  // n-gram lookup: no GPU work
  CHECK(d.at("verifying_share").get<double>() > 0.99);

  // Steps after the prompts: every iteration but the eight 128-token prefills.
  const auto durations = column(dir.path() / "iterations.csv", "duration_s");
  const auto prefill = column(dir.path() / "iterations.csv", "prefill_tokens");
  double step_s = 0;
  std::int64_t steps = 0;
  for (std::size_t i = 0; i < durations.size(); ++i) {
    if (prefill[i] == 128) continue;
    step_s += durations[i];
    ++steps;
  }
  step_s /= static_cast<double>(steps);
  const double tokens_per_step = d.at("mean_tokens_per_step").get<double>();
  CHECK(s.at("tpot_s").at("mean").get<double>() == Approx(step_s / tokens_per_step).epsilon(0.01));

  // The same requests without speculation: each step emits one token, and takes less time
  // than a verification, but not 2.5 times less on a memory-bound decode.
  test::ScratchDir plain_dir("spec_one_at_a_time_plain");
  REQUIRE(run(plain_dir.path(), {"--arrival", "constant", "--rate", "0.01", "--num-requests", "8",
                                 "--prompt-tokens", "128", "--output-tokens", "4000"})
              .exit_code == 0);
  const double plain_tpot = summary_of(plain_dir.path()).at("tpot_s").at("mean").get<double>();
  CHECK(plain_tpot < step_s);
  CHECK(s.at("tpot_s").at("mean").get<double>() < plain_tpot / 2);
}

TEST_CASE("speculative runs repeat for a seed and differ for another", "[speculative]") {
  test::ScratchDir dir("spec_determinism");
  const auto args = [](const std::string& seed) {
    return std::vector<std::string>{"--num-requests",
                                    "60",
                                    "--rate",
                                    "20",
                                    "--seed",
                                    seed,
                                    "--speculative-config",
                                    R"({"method": "eagle", "num_speculative_tokens": 4})",
                                    "--acceptance-rate",
                                    "0.8,0.6,0.5"};
  };
  REQUIRE(run(dir.path() / "a", args("3")).exit_code == 0);
  REQUIRE(run(dir.path() / "b", args("3")).exit_code == 0);
  REQUIRE(run(dir.path() / "c", args("4")).exit_code == 0);
  for (const char* file : {"summary.json", "requests.csv", "iterations.csv"}) {
    INFO(file);
    CHECK(test::read_file(dir.path() / "a" / file) == test::read_file(dir.path() / "b" / file));
  }
  CHECK(summary_of(dir.path() / "a").at("spec_decode") !=
        summary_of(dir.path() / "c").at("spec_decode"));
  const nlohmann::json d = summary_of(dir.path() / "a").at("spec_decode");
  CHECK(d.at("proposing_share").get<double>() > 0);  // the EAGLE head runs on the GPU
  const nlohmann::json resolved =
      nlohmann::json::parse(test::read_file(dir.path() / "a" / "resolved_config.json"));
  CHECK(resolved.at("speculative").at("method") == "eagle");
  CHECK(resolved.at("speculative").at("acceptance_rate") == nlohmann::json({0.8, 0.6, 0.5}));
}

TEST_CASE("speculation under memory pressure, a tight token budget and mixed batches",
          "[speculative]") {
  test::ScratchDir dir("spec_pressure");
  // A small cache and budget: verifications share steps with prompt chunks, are cut to the
  // budget, and running requests are preempted and recompute; every invariant the replica
  // checks each iteration holds, and every request gets exactly its output.
  const auto r =
      run(dir.path(), {"--num-requests", "80", "--rate", "inf", "--kv-capacity-tokens", "4000",
                       "--max-batched-tokens", "128", "--max-num-seqs", "24", "--prompt-tokens",
                       "300", "--output-tokens", "200", "--speculative-config",
                       R"({"model": "llama-3.1-8b", "num_speculative_tokens": 5})",
                       "--acceptance-rate", "0.75"});
  REQUIRE(r.exit_code == 0);
  const nlohmann::json s = summary_of(dir.path());
  CHECK(s.at("requests_completed") == 80);
  CHECK(s.at("preemptions").get<std::int64_t>() > 0);
  for (const double output : column(dir.path() / "requests.csv", "output_tokens"))
    CHECK(output == 200);
  for (const double tokens : column(dir.path() / "iterations.csv", "prefill_tokens"))
    CHECK(tokens <= 128);
  // Some steps verify drafts beside a prompt chunk.
  const auto sequences = column(dir.path() / "iterations.csv", "prefill_sequences");
  const auto sampled = column(dir.path() / "iterations.csv", "sampled_sequences");
  bool mixed = false;
  for (std::size_t i = 0; i < sequences.size(); ++i)
    mixed = mixed || (sequences[i] > 1 && sampled[i] > sequences[i]);
  CHECK(mixed);
  CHECK(s.at("spec_decode").at("proposing_share").get<double>() > 0.1);  // an 8B draft
}

TEST_CASE("bad speculative input: one line, exit 3 or 4", "[speculative][bad_input]") {
  test::ScratchDir dir("spec_bad");
  const auto out = dir.path().string();
  const auto bad = [&](std::vector<std::string> args, int code, const std::string& needle) {
    std::vector<std::string> all = {"run", "--out", out, "--num-requests", "5"};
    all.insert(all.end(), args.begin(), args.end());
    test::require_error(test::run_servesim(all), code, needle);
  };
  bad({"--speculative-config", R"({"method": "ngram", "num_speculative_tokens": 0})",
       "--acceptance-rate", "0.5"},
      3, "num_speculative_tokens");
  bad({"--speculative-config", kNgram3, "--acceptance-rate", "1"}, 3, "[0, 1)");
  bad({"--speculative-config", kNgram3, "--acceptance-rate", "-0.2"}, 3, "[0, 1)");
  bad({"--speculative-config", kNgram3, "--acceptance-rate", "x"}, 3, "--acceptance-rate");
  bad({"--speculative-config", "{not json", "--acceptance-rate", "0.5"}, 3, "--speculative-config");
  bad({"--speculative-config", R"({"model": "llama-2-7b", "num_speculative_tokens": 3})",
       "--acceptance-rate", "0.5"},
      3, "vocabulary");
  bad({"--speculative-config", R"({"model": "llama-3-70b", "num_speculative_tokens": 3})",
       "--acceptance-rate", "0.5"},
      4, "does not fit beside");
  bad({"--speculative-config", R"({"method": "mtp", "num_speculative_tokens": 1})",
       "--acceptance-rate", "0.5"},
      3, "num_nextn_predict_layers");
  bad({"--speculative-config", kNgram3, "--acceptance-rate", "0.5", "--scheduler", "sarathi"}, 3,
      "vllm_v1");
}

TEST_CASE("roofline --speculative prices a verification step against a plain decode",
          "[speculative][roofline]") {
  const auto r = test::run_servesim(
      {"roofline", "--decode-batch", "8", "--context", "1024", "--speculative", "3", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = r.json();
  CHECK(j.at("batch").at("speculative_tokens") == 3);
  CHECK(j.at("batch").at("prefill_tokens") == 32);  // 8 sequences x 4 query tokens
  const double verify_s = j.at("total_time_s").get<double>();
  const double plain_s = j.at("plain_decode_time_s").get<double>();
  // Memory-bound at batch 8: four times the tokens for much less than four times the time.
  CHECK(verify_s > plain_s);
  CHECK(verify_s < 1.5 * plain_s);
  const auto text = test::run_servesim({"roofline", "--decode-batch", "8", "--speculative", "3"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Matchers::Contains("verifying 3 drafts"));
}

TEST_CASE("an MTP layer and a draft model take memory beside the target", "[speculative]") {
  test::ScratchDir dir("spec_memory");
  // llama-3-8b declaring one next-n layer, as DeepSeek-V3's config.json does.
  nlohmann::json model =
      nlohmann::json::parse(test::read_file(test::source_dir() / "models" / "llama-3-8b.json"));
  model["num_nextn_predict_layers"] = 1;
  std::filesystem::create_directories(dir.path());
  const auto model_path = dir.path() / "llama-3-8b-mtp.json";
  std::ofstream(model_path) << model.dump();
  const auto capacity = [&](const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> all = {"--num-requests", "10", "--rate", "inf"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<std::string> cli = {"run", "--out", (dir.path() / name).string(), "--model",
                                    model_path.string()};
    cli.insert(cli.end(), all.begin(), all.end());
    const auto r = test::run_servesim(cli);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return column(dir.path() / name / "iterations.csv", "kv_capacity_tokens").front();
  };
  const double alone = capacity("alone", {});
  const double mtp =
      capacity("mtp", {"--speculative-config", R"({"method": "mtp", "num_speculative_tokens": 2})",
                       "--acceptance-rate", "0.8"});
  const double ngram =
      capacity("ngram", {"--speculative-config", kNgram3, "--acceptance-rate", "0.8"});
  const double draft = capacity(
      "draft", {"--speculative-config", R"({"model": "llama-3.1-8b", "num_speculative_tokens": 2})",
                "--acceptance-rate", "0.8"});
  CHECK(ngram == alone);
  // One layer of 32 beside the target: a little less than 1/33 of the KV room goes.
  CHECK(mtp < alone);
  CHECK(mtp > 0.95 * alone);
  // A draft as large as the target: its 16 GB of weights and a KV as large per token.
  CHECK(draft < 0.5 * alone);
  CHECK(summary_of(dir.path() / "mtp").at("spec_decode").at("proposing_share").get<double>() > 0);
}

TEST_CASE("bulk decoding is off when speculating: --no-bulk-decode changes nothing",
          "[speculative]") {
  test::ScratchDir dir("spec_bulk");
  const std::vector<std::string> args = {
      "--num-requests",    "40", "--rate", "10", "--speculative-config", kNgram3,
      "--acceptance-rate", "0.6"};
  REQUIRE(run(dir.path() / "bulk", args).exit_code == 0);
  std::vector<std::string> plain = args;
  plain.push_back("--no-bulk-decode");
  REQUIRE(run(dir.path() / "plain", plain).exit_code == 0);
  for (const char* file : {"summary.json", "requests.csv", "iterations.csv"}) {
    INFO(file);
    CHECK(test::read_file(dir.path() / "bulk" / file) ==
          test::read_file(dir.path() / "plain" / file));
  }
}

TEST_CASE("speculation pays at batch 1 and stops paying at large batches", "[speculative]") {
  test::ScratchDir dir("spec_crossover");
  // The sweep of docs/speculative.md at two of its points: an EAGLE head at a = 0.5 gains
  // about 1.5x at batch 1 and loses at batch 256, where the verification's GEMMs are
  // compute-bound.
  const auto throughput = [&](const std::string& name, std::int64_t batch, bool speculate) {
    std::vector<std::string> args = {"--rate",          "inf",
                                     "--num-requests",  std::to_string(batch == 1 ? 8 : 2 * batch),
                                     "--max-num-seqs",  std::to_string(batch),
                                     "--prompt-tokens", "512",
                                     "--output-tokens", "256"};
    if (speculate) {
      for (const char* a :
           {"--speculative-config", R"({"method": "eagle", "num_speculative_tokens": 3})",
            "--acceptance-rate", "0.5"})
        args.emplace_back(a);
    }
    REQUIRE(run(dir.path() / name, args).exit_code == 0);
    return summary_of(dir.path() / name).at("throughput_output_tokens_per_s").get<double>();
  };
  CHECK(throughput("spec1", 1, true) > 1.3 * throughput("plain1", 1, false));
  CHECK(throughput("spec256", 256, true) < 0.95 * throughput("plain256", 256, false));
}
