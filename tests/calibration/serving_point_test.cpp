#include <catch2/catch.hpp>

#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_runs.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// The columns of the shared vLLM 0.15.1 file that a load-stage row needs, and two stages.
const std::string kLoadHeader =
    "model,tp,workload,stage,rate_per_s,stage_duration_s,groups,users_per_group,"
    "system_prompt_tokens,question_tokens,output_tokens_requested,requests_sent,"
    "requests_completed,prompt_tokens_mean,output_tokens_mean,ttft_ms_mean,e2e_ms_mean,"
    "itl_ms_mean,output_tokens_per_s\n";
const std::string kLoadRows =
    "meta-llama/Llama-2-7b-hf,1,codegen,0,5,600,11,4,100,466,247,3000,3000,592,194,25.0,1810,"
    "9.25,966\n"
    "meta-llama/Llama-2-7b-hf,1,codegen,1,10,600,11,4,100,466,247,6000,6000,592,196,29.5,2216,"
    "11.21,1953\n";
const std::string kSetup = R"({"source": "test", "hardware": "h100-sxm", "engine": "vllm",
  "knobs": {"max_num_seqs": 128, "max_model_len": 4096, "max_num_batched_tokens": 2048,
            "gpu_memory_utilization": 0.9, "block_size": 16, "enable_prefix_caching": true}})";

ServingPointOptions options_with(const std::filesystem::path& setup) {
  ServingPointOptions o;
  o.data_root = test::source_dir();
  o.setup = setup;
  return o;
}

std::string error_of(const std::filesystem::path& file, const ServingPointOptions& options) {
  try {
    read_serving_points(file, options);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for " << file);
  return {};
}

}  // namespace

TEST_CASE("a load-stage row takes the setup's columns and its own over them", "[serving_point]") {
  const test::ScratchDir dir("serving_point_load");
  const auto setup = dir.write("setup.json", kSetup);
  // This file states its own max_num_seqs: the row wins over the setup.
  const auto file = dir.write("m.csv", "max_num_seqs," + kLoadHeader + "64," +
                                           kLoadRows.substr(0, kLoadRows.find('\n') + 1));
  const auto points = read_serving_points(file, options_with(setup));
  REQUIRE(points.size() == 1);
  const ServingPoint& p = points[0];
  CHECK(p.model_name == "meta-llama/Llama-2-7b-hf");
  CHECK(p.model == "llama-2-7b");  // through the Hugging Face id table
  CHECK(p.hardware == "h100-sxm");
  CHECK(p.tp == 1);
  CHECK(p.engine == std::optional<std::string>("vllm"));
  CHECK(p.knobs.max_num_seqs == std::optional<std::int64_t>(64));
  CHECK(p.knobs.max_num_batched_tokens == std::optional<std::int64_t>(2048));
  CHECK(p.knobs.gpu_memory_utilization == std::optional<double>(0.9));
  CHECK(p.knobs.enable_prefix_caching == std::optional<bool>(true));
  CHECK(p.row == 1);
  const auto& s = std::get<LoadStage>(p.workload);
  CHECK(s.workload == "codegen");
  CHECK(s.rate_per_s == 5);
  CHECK(s.duration_s == 600);
  CHECK(s.groups == 11);
  CHECK(s.prompt_tokens_mean == 592);
  CHECK(s.output_tokens_mean == 194);
  CHECK(p.measured[ServingMetric::TtftMs] == std::optional<double>(25.0));
  CHECK(p.measured[ServingMetric::ItlMs] == std::optional<double>(9.25));
  CHECK(p.measured[ServingMetric::CompletedShare] == std::optional<double>(1.0));
  CHECK_FALSE(p.measured.overloaded);
  CHECK(p.workload_label() == "codegen");
}

TEST_CASE("ignore_eos from the setup, and refused without output_tokens_requested",
          "[serving_point]") {
  const test::ScratchDir dir("serving_point_ignore_eos");
  std::string with_eos = kSetup;
  with_eos.insert(with_eos.find("\"engine\""), "\"ignore_eos\": true, ");
  const auto setup = dir.write("setup.json", with_eos);
  const auto file = dir.write("m.csv", kLoadHeader + kLoadRows);
  const auto points = read_serving_points(file, options_with(setup));
  REQUIRE(points.size() == 2);
  const auto& s = std::get<LoadStage>(points[0].workload);
  CHECK(s.ignore_eos);
  CHECK(s.generated_output_tokens() == 247);
  CHECK(s.counted_per_generated_token() == Approx(194.0 / 247));

  // The same rows without the requested length: nothing says what each request generated.
  std::string header = kLoadHeader;
  header.replace(header.find("output_tokens_requested,"), 24, "");
  std::string rows = kLoadRows;
  for (std::size_t at = rows.find(",247,"); at != std::string::npos; at = rows.find(",247,"))
    rows.replace(at, 5, ",");
  const auto bare = dir.write("bare.csv", header + rows);
  const std::string error = error_of(bare, options_with(setup));
  CHECK_THAT(error, Contains("field \"ignore_eos\""));
  CHECK_THAT(error, Contains("needs output_tokens_requested"));
}

TEST_CASE("command-line --hw and --engine override file and setup", "[serving_point]") {
  const test::ScratchDir dir("serving_point_flags");
  const auto setup = dir.write("setup.json", kSetup);
  const auto file = dir.write("m.csv", kLoadHeader + kLoadRows);
  auto options = options_with(setup);
  options.hardware = "h200";
  options.engine = "sglang";
  const auto points = read_serving_points(file, options);
  REQUIRE(points.size() == 2);
  CHECK(points[1].hardware == "h200");
  CHECK(points[1].engine == std::optional<std::string>("sglang"));
}

TEST_CASE("overloaded rows and an ITL derived as the data README computes it", "[serving_point]") {
  const test::ScratchDir dir("serving_point_overloaded");
  const auto setup = dir.write("setup.json", R"({"source": "test", "hardware": "h100-sxm"})");
  const auto file =
      dir.write("m.csv",
                "model,tp,workload,stage,rate_per_s,stage_duration_s,groups,users_per_group,"
                "system_prompt_tokens,requests_sent,requests_completed,prompt_tokens_mean,"
                "output_tokens_mean,ttft_ms_mean,e2e_ms_mean\n"
                "llama-2-7b,1,reasoning,0,4,1200,23,1,100,4800,732,1082,1101,106644.7,160063\n");
  const auto points = read_serving_points(file, options_with(setup));
  REQUIRE(points.size() == 1);
  CHECK(points[0].model == "llama-2-7b");
  CHECK(points[0].measured.overloaded);
  CHECK(*points[0].measured[ServingMetric::ItlMs] == Approx((160063 - 106644.7) / 1100.0));
  CHECK_FALSE(points[0].measured[ServingMetric::OutputTokensPerS]);
}

TEST_CASE("static-batch and burst files are told by their header", "[serving_point]") {
  const test::ScratchDir dir("serving_point_kinds");
  const auto none = dir.write("none.json", R"({"source": "test"})");
  const auto statics = dir.write(
      "s.csv",
      "hardware,model,batch_size,tp,input_tokens,output_tokens,output_tokens_per_s_per_gpu\n"
      "h200,llama-2-70b,512,2,128,2048,3963\n");
  const auto s = read_serving_points(statics, options_with(none));
  REQUIRE(s.size() == 1);
  CHECK(s[0].tp == 2);
  CHECK(s[0].hardware == "h200");
  CHECK(std::get<StaticBatch>(s[0].workload).batch_size == 512);
  CHECK(s[0].measured[ServingMetric::OutputTokensPerSPerGpu] == std::optional<double>(3963));
  CHECK(s[0].workload_label() == "batch 512 x 128/2048");

  const auto burst_setup = dir.write("b.json", R"({"source": "test", "model": "opt-13b",
      "hardware": "a100-40gb", "tp": 1, "num_requests": 1000, "prompt_tokens": 512,
      "output_tokens_mean": 128, "columns": {"total_tokens_per_s": "blog"}})");
  const auto burst = dir.write("b.csv",
                               "max_output_tokens,max_num_batched_tokens,blog,other\n"
                               "32,8700,6121,5752\n128,7500,3592,3180\n");
  const auto b = read_serving_points(burst, options_with(burst_setup));
  REQUIRE(b.size() == 2);
  CHECK(b[1].model == "opt-13b");
  CHECK(b[1].knobs.max_num_batched_tokens == std::optional<std::int64_t>(7500));
  CHECK(std::get<BurstRequests>(b[1].workload).max_output_tokens == 128);
  CHECK(b[1].measured[ServingMetric::TotalTokensPerS] == std::optional<double>(3592));
}

TEST_CASE("a shipped setup is found by the file's stem under validation/setups",
          "[serving_point]") {
  const test::ScratchDir dir("serving_point_stem");
  const auto file = dir.write("vllm-0.15.1-h100-sxm.csv", kLoadHeader + kLoadRows);
  ServingPointOptions options;
  options.data_root = test::source_dir();
  REQUIRE(setup_file_for(file, options));
  CHECK(setup_file_for(file, options)->filename() == "vllm-0.15.1-h100-sxm.json");
  const auto points = read_serving_points(file, options);
  REQUIRE(points.size() == 2);
  CHECK(points[0].engine == std::optional<std::string>("vllm"));
  CHECK(points[0].knobs.max_model_len == std::optional<std::int64_t>(4096));
  CHECK_FALSE(setup_file_for(dir.path() / "other.csv", options));
}

TEST_CASE("a measured file's Hugging Face model ids resolve to the shipped models",
          "[serving_point]") {
  const test::ScratchDir dir("serving_point_hf_id");
  const auto setup = dir.write("setup.json", kSetup);
  const auto file = dir.write(
      "m.csv", kLoadHeader +
                   "codellama/CodeLlama-34b-Instruct-hf,2,general,0,8,600,9,5,100,447,248,4800,"
                   "4800,574,250,46.0,3694,14.65,1992\n");
  const auto points = read_serving_points(file, options_with(setup));
  REQUIRE(points.size() == 1);
  CHECK(points[0].model == "codellama-34b");
}

TEST_CASE("bad measured files name file, row and column", "[serving_point]") {
  const test::ScratchDir dir("serving_point_bad");
  const auto setup = dir.write("setup.json", kSetup);
  const auto options = options_with(setup);
  const std::string row2 = kLoadRows.substr(kLoadRows.find('\n') + 1);

  const auto missing = dir.write("missing.csv", "model,tp\nllama-2-7b,1\n");
  CHECK_THAT(error_of(missing, options), Contains("missing.csv") && Contains("cannot tell"));
  std::string no_e2e = kLoadHeader;
  no_e2e.replace(no_e2e.find(",e2e_ms_mean"), 12, "");
  std::string row_no_e2e = row2;
  row_no_e2e.replace(row_no_e2e.find(",2216"), 5, "");
  const auto lacks = dir.write("lacks.csv", no_e2e + row_no_e2e);
  CHECK_THAT(error_of(lacks, options),
             Contains("lacks.csv: line 1 (header), column \"e2e_ms_mean\"") && Contains("missing"));

  std::string bad_tp = row2;
  bad_tp.replace(bad_tp.find(",1,"), 3, ",two,");
  const auto text = dir.write("text.csv", kLoadHeader + kLoadRows + bad_tp);
  CHECK_THAT(error_of(text, options), Contains("text.csv: row 3 (line 4), column \"tp\"") &&
                                          Contains("expected an integer") && Contains("\"two\""));

  std::string unknown = row2;
  unknown.replace(0, unknown.find(','), "acme/Unknown-7b");
  const auto model = dir.write("model.csv", kLoadHeader + unknown);
  CHECK_THAT(error_of(model, options), Contains("model.csv: row 1 (line 2), column \"model\"") &&
                                           Contains("unknown model \"acme/Unknown-7b\""));
  std::string short_name = row2;
  short_name.replace(0, short_name.find(','), "llama-9");
  const auto named = dir.write("named.csv", kLoadHeader + short_name);
  CHECK_THAT(error_of(named, options), Contains("column \"model\"") && Contains("llama-9"));

  const auto bad_key = dir.write("bad_setup.json", R"({"source": "x", "hardwar": "h100-sxm"})");
  const auto plain = dir.write("plain.csv", kLoadHeader + kLoadRows);
  CHECK_THAT(error_of(plain, options_with(bad_key)),
             Contains("bad_setup.json") && Contains("\"hardwar\"") && Contains("unknown key"));
  const auto bad_knob =
      dir.write("bad_knob.json", R"({"source": "x", "knobs": {"max_num_seq": 128}})");
  CHECK_THAT(error_of(plain, options_with(bad_knob)), Contains("bad_knob.json") &&
                                                          Contains("knobs.max_num_seq") &&
                                                          Contains("unknown knob"));
  const auto bad_value = dir.write("bad_value.json", R"({"source": "x", "hardware": "h100-sxm",
                                     "knobs": {"gpu_memory_utilization": 1.5}})");
  CHECK_THAT(
      error_of(plain, options_with(bad_value)),
      Contains("bad_value.json: field \"knobs.gpu_memory_utilization\"") && Contains("(0, 1]"));
  const auto no_hw = dir.write("no_hw.json", R"({"source": "x"})");
  CHECK_THAT(error_of(plain, options_with(no_hw)),
             Contains("column \"hardware\"") && Contains("missing"));
}

TEST_CASE("a vllm bench serve result replays its lengths at its rate", "[serving_point]") {
  const test::ScratchDir dir("serving_point_bench");
  const auto setup = dir.write("setup.json", R"({"source": "t", "hardware": "h100-sxm", "tp": 2})");
  const auto detailed = dir.write("r.json", R"({"model_id": "meta-llama/Llama-2-7b-hf",
      "num_prompts": 3, "request_rate": 4.0, "burstiness": 1.0, "max_concurrency": null,
      "duration": 10, "completed": 3, "total_input_tokens": 60, "total_output_tokens": 30,
      "mean_ttft_ms": 20.0, "mean_tpot_ms": 9.0, "mean_itl_ms": 9.5, "mean_e2el_ms": 200.0,
      "output_throughput": 3.0, "input_lens": [10, 20, 30], "output_lens": [5, 10, 15]})");
  const auto points = read_serving_points(detailed, options_with(setup));
  REQUIRE(points.size() == 1);
  const auto& r = std::get<BenchReplay>(points[0].workload);
  CHECK(points[0].tp == 2);
  CHECK(points[0].model == "llama-2-7b");
  REQUIRE(r.requests.size() == 3);
  CHECK(r.requests[2].prompt_tokens == 30);
  CHECK(r.requests[2].output_tokens == 15);
  CHECK(r.request_rate_per_s == 4.0);
  CHECK(points[0].measured[ServingMetric::ItlMs] == std::optional<double>(9.5));
  CHECK(points[0].measured[ServingMetric::E2eMs] == std::optional<double>(200.0));

  // Without --save-detailed only totals remain: the mean lengths, num_prompts times.
  const auto totals = dir.write("t.json", R"({"model_id": "llama-2-7b", "num_prompts": 4,
      "request_rate": "inf", "burstiness": 1.0, "max_concurrency": null, "completed": 4,
      "total_input_tokens": 402, "total_output_tokens": 98, "mean_ttft_ms": 20.0})");
  const auto t = read_serving_points(totals, options_with(setup));
  const auto& tr = std::get<BenchReplay>(t[0].workload);
  REQUIRE(tr.requests.size() == 4);
  CHECK(tr.requests[0].prompt_tokens == 101);  // 402 / 4 rounded
  CHECK(tr.requests[0].output_tokens == 25);   // 24.5 rounded away from zero
  CHECK(std::isinf(tr.request_rate_per_s));

  const auto no_rate = dir.write("n.json", R"({"model_id": "llama-2-7b", "num_prompts": 4,
      "request_rate": null, "completed": 4, "total_input_tokens": 4, "total_output_tokens": 4})");
  CHECK_THAT(error_of(no_rate, options_with(setup)),
             Contains("n.json") && Contains("request_rate") && Contains("cannot be replayed"));
}

TEST_CASE("consecutive stages of one model, TP and workload form one run", "[serving_point]") {
  const test::ScratchDir dir("serving_point_runs");
  const auto setup = dir.write("setup.json", kSetup);
  const std::string other =
      "meta-llama/Llama-2-7b-hf,1,roleplay,0,6,1200,10,5,150,600,251,7200,7200,786,206,27.1,2071,"
      "9.97,1237\n";
  // Stage 1 before stage 0, another workload in between.
  const std::string row0 = kLoadRows.substr(0, kLoadRows.find('\n') + 1);
  const std::string row1 = kLoadRows.substr(kLoadRows.find('\n') + 1);
  const auto file = dir.write("m.csv", kLoadHeader + row1 + other + row0);
  const auto runs = group_serving_runs(read_serving_points(file, options_with(setup)));
  REQUIRE(runs.size() == 2);
  REQUIRE(runs[0].points.size() == 2);
  CHECK(std::get<LoadStage>(runs[0].points[0].workload).stage == 0);
  CHECK(std::get<LoadStage>(runs[0].points[1].workload).stage == 1);
  CHECK(runs[1].points.size() == 1);
  CHECK(std::get<LoadStage>(runs[1].points[0].workload).workload == "roleplay");

  const auto twice = dir.write("twice.csv", kLoadHeader + row0 + row0);
  try {
    group_serving_runs(read_serving_points(twice, options_with(setup)));
    FAIL("a stage given twice was accepted");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains("twice.csv row 2") && Contains("appears twice"));
  }
}
