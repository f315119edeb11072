// Malformed measurement files and measured serving points fed to servesim validate (see
// bad_input_test.cpp for the contract each case is held to).
#include <catch2/catch.hpp>

#include "tests/bad_input/bad_input_support.h"
#include "tests/bad_input/subprocess.h"
#include "tests/support/test_support.h"

using namespace servesim::test::bad_input;
using servesim::test::run_executable;

namespace {

std::vector<BadInputCase> measurement_cases() {
  const auto validate = [](std::string name, std::vector<InputFile> files, std::string input,
                           std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        std::move(files),
                        {"validate", "--hw", "h100-sxm", "--measurements", std::move(input)},
                        kInput,
                        std::move(expect)};
  };
  return {
      validate("measurements: truncated JSON",
               {{"m.json", R"({"format": "servesim-measurements", "records": [)"}}, "m.json",
               {"m.json", "malformed JSON at line 1"}),
      validate("measurements: wrong format tag", {{"m.json", R"({"format": "csv"})"}}, "m.json",
               {"m.json", "field \"format\""}),
      validate("measurements: empty file", {{"m.json", ""}}, "m.json", {"m.json", "empty"}),
      validate("measurements: neither JSON nor CSV", {{"notes.txt", "1 2 3"}}, "notes.txt",
               {"notes.txt", "expected a .json measurements file"}),
      validate("measurements: folder without measurements", {{"meas", "", Kind::Directory}}, "meas",
               {"meas", "no measurement files"}),
      validate("measurements: missing file", {}, "absent.json", {"absent.json", "not found"}),
      {"measurements: no input given",
       {},
       {"validate", "--hw", "h100-sxm"},
       kUsage,
       {"--measurements"}},
  };
}

// Measured serving points (validate --measured), each with --csv: nothing may be written.
std::vector<BadInputCase> serving_point_cases() {
  const std::string header =
      "model,tp,workload,stage,rate_per_s,stage_duration_s,groups,users_per_group,"
      "system_prompt_tokens,requests_sent,requests_completed,prompt_tokens_mean,"
      "output_tokens_mean,ttft_ms_mean,e2e_ms_mean\n";
  const std::string row = "llama-2-7b,1,chat,0,2,600,4,2,100,1200,1200,300,50,30,600\n";
  const std::string setup = R"({"source": "test", "hardware": "h100-sxm"})";
  const auto measured = [&](std::string name, std::string csv, std::string setup_json,
                            std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        {{"p.csv", std::move(csv)}, {"s.json", std::move(setup_json)}},
                        {"validate", "--measured", "p.csv", "--setup", "s.json", "--csv", "out.csv",
                         "--max-requests-per-point", "4"},
                        kInput,
                        std::move(expect)};
  };
  const std::string closed_header =
      "model,tp,concurrency,num_prompts,input_tokens,output_tokens,random_range_ratio,"
      "ttft_ms_mean,tpot_ms_mean\n";
  const std::string closed_row = "llama-2-7b,1,4,40,128,64,0.8,30,9\n";
  std::string no_e2e = header;
  no_e2e.replace(no_e2e.find(",e2e_ms_mean"), 12, "");
  return {
      measured("serving points: missing column", no_e2e + row.substr(0, row.rfind(',')) + "\n",
               setup, {"p.csv: line 1 (header), column \"e2e_ms_mean\"", "missing"}),
      measured("serving points: non-numeric value",
               header + row + patched(row, ",600,4,", ",ten minutes,4,"), setup,
               {"p.csv: row 2 (line 3), column \"stage_duration_s\"", "\"ten minutes\""}),
      measured("serving points: unknown model", header + patched(row, "llama-2-7b", "acme/llm-9b"),
               setup, {"p.csv: row 1 (line 2), column \"model\"", "unknown model \"acme/llm-9b\""}),
      measured("serving points: unknown setup key", header + row,
               R"({"source": "test", "hardware": "h100-sxm", "knobs": {"max_num_seqz": 8}})",
               {"s.json", "knobs.max_num_seqz", "unknown knob"}),
      measured("serving points: unknown top-level setup key", header + row,
               R"({"source": "test", "hardwre": "h100-sxm"})",
               {"s.json", "\"hardwre\"", "unknown key"}),
      measured("serving points: a configuration the run refuses", header + row,
               R"({"source": "test", "hardware": "h100-sxm",
                   "knobs": {"max_num_seqs": 4096, "max_num_batched_tokens": 2048}})",
               {"p.csv row 1", "max_num_batched_tokens"}),
      // Closed loops (vllm bench serve --max-concurrency): a concurrency of 0, or none.
      measured("serving points: closed loop of concurrency 0",
               closed_header + closed_row + patched(closed_row, ",1,4,40,", ",1,0,40,"), setup,
               {"p.csv: row 2 (line 3), column \"concurrency\"", "at least 1", "\"0\""}),
      measured("serving points: closed loop without a concurrency",
               closed_header + patched(closed_row, ",1,4,40,", ",1,,40,"), setup,
               {"p.csv: row 1 (line 2), column \"concurrency\"", "empty"}),
      measured("serving points: closed loop without a measured figure",
               "model,tp,concurrency,num_prompts,input_tokens,output_tokens\n"
               "llama-2-7b,1,4,40,128,64\n",
               setup, {"p.csv: line 1 (header)", "tpot_ms_mean"}),
  };
}

}  // namespace

TEST_CASE("Malformed measured serving points give one clear error line and write nothing",
          "[bad_input]") {
  check_cases("bad_serving_points", serving_point_cases());
}

TEST_CASE("Malformed measurement files give one clear error line", "[bad_input]") {
  const servesim::test::ScratchDir scratch("validate_help");
  if (run_executable(SERVESIM_EXECUTABLE, {"validate", "--help"}, scratch.path(), kTimeLimitS)
          .exit_code != 0) {
    WARN("skipped: this build has no servesim validate");
    return;
  }
  check_cases("bad_measurements", measurement_cases());
}
