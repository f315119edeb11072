// `servesim calibrate --measured`: an engine fitted end to end on the shared vLLM 0.15.1 data
// (when present), the fitted engine run; and the command's bad input.
#include <catch2/catch.hpp>

#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// Two back-to-back stages of one made-up workload, with the knobs of the vLLM 0.15.1 data.
const std::string kPoints =
    "model,tp,workload,stage,rate_per_s,stage_duration_s,groups,users_per_group,"
    "system_prompt_tokens,requests_sent,requests_completed,prompt_tokens_mean,"
    "output_tokens_mean,ttft_ms_mean,e2e_ms_mean\n"
    "llama-2-7b,1,chat,0,2,600,4,2,100,1200,1200,300,50,30,600\n"
    "llama-2-7b,1,chat,1,4,600,4,2,100,2400,2400,300,50,35,700\n";
const std::string kSetup = R"({"source": "test", "hardware": "h100-sxm",
  "knobs": {"max_num_seqs": 128, "max_model_len": 4096, "max_num_batched_tokens": 2048,
            "gpu_memory_utilization": 0.9, "block_size": 16}})";

}  // namespace

TEST_CASE("calibrate --measured fits vllm to the shared vLLM 0.15.1 H100 data and the result runs",
          "[engine_fit_cli][shared_data]") {
  const auto shared = test::shared_data_path("measured/vllm-0.15.1-h100-sxm.csv");
  if (!shared) return;
  const std::filesystem::path& file = *shared;
  const test::ScratchDir dir("engine_fit_cli_shared");
  const auto out = dir.path() / "e.json";
  const auto r = test::run_servesim({"calibrate", "--measured", file.string(), "--engine", "vllm",
                                     "--max-requests-per-point", "40", "--max-evaluations", "12",
                                     "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("Fitted 6 terms of vllm") && Contains(out.string()) &&
                        Contains("kernels.gemm_factor") && Contains("held-out MAPE"));

  const EngineProfile fitted = load_engine_file(out);
  CHECK(fitted.name == "vllm");
  REQUIRE(fitted.calibration.is_object());
  CHECK(fitted.calibration.at("files") == nlohmann::json::array({file.string()}));
  CHECK(fitted.calibration.at("tool") == "servesim calibrate --measured");
  CHECK(fitted.calibration.at("points").get<int>() > 0);
  CHECK(fitted.calibration.at("residuals").contains("ttft_ms_mean"));
  for (const char* term : {"host.step_s", "kernels.gemm_factor"}) {
    INFO(term);
    REQUIRE(fitted.sources.count(term) == 1);
    CHECK_THAT(fitted.sources.at(term), Contains("fitted by servesim calibrate --measured"));
  }
  // The scheduling the fit did not touch is the base's.
  const EngineProfile base = test::shipped_engine("vllm");
  CHECK(fitted.scheduling.scheduler == base.scheduling.scheduler);
  CHECK(fitted.costs.cuda_graph_capture_sizes == base.costs.cuda_graph_capture_sizes);
  // Each term within its range.
  CHECK(fitted.costs.kernels.gemm >= 0.9);
  CHECK(fitted.costs.kernels.gemm <= 3.0);
  CHECK(fitted.costs.host.step_s <= 0.05);

  // The fitted engine is a profile like any other.
  const auto run = dir.path() / "run";
  const auto served = test::run_servesim(
      {"run", "--engine", out.string(), "--num-requests", "20", "--out", run.string()});
  INFO(served.err);
  REQUIRE(served.exit_code == 0);
  const auto resolved = nlohmann::json::parse(test::read_file(run / "resolved_config.json"));
  CHECK(resolved.at("engine").at("name") == out.string());
  CHECK(resolved.at("engine").at("host").at("step_s").get<double>() ==
        Approx(fitted.costs.host.step_s));
  CHECK(resolved.at("engine").at("kernels").at("gemm_factor").get<double>() ==
        Approx(fitted.costs.kernels.gemm));
}

TEST_CASE("calibrate --measured: bad input", "[engine_fit_cli]") {
  const test::ScratchDir dir("engine_fit_cli_bad");
  const auto file = dir.write("points.csv", kPoints);
  const auto setup = dir.write("setup.json", kSetup);
  const auto out = dir.path() / "e.json";

  const auto no_engine = test::run_servesim(
      {"calibrate", "--measured", file.string(), "--setup", setup.string(), "--out", out.string()});
  test::require_error(no_engine, 2, "--measured needs --engine");

  const auto unknown_term =
      test::run_servesim({"calibrate", "--measured", file.string(), "--setup", setup.string(),
                          "--engine", "vllm", "--terms", "kernels.nope", "--out", out.string()});
  test::require_error(unknown_term, 3, "--terms: \"kernels.nope\" is not a term a fit sets");

  const auto unknown_engine =
      test::run_servesim({"calibrate", "--measured", file.string(), "--setup", setup.string(),
                          "--engine", "no-such-engine", "--out", out.string()});
  INFO(unknown_engine.err);
  CHECK(unknown_engine.exit_code == 3);
  CHECK_THAT(unknown_engine.err, Contains("no-such-engine"));

  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"calibrate",    "--measured", file.string(), "--setup",
                                     setup.string(), "--out",      out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_servesim(args);
  };
  test::require_error(run({"--engine", "vllm", "--select", "gpu=h100"}), 2,
                      "--select: expected model=, hardware=, tp= or engine= and a value, got "
                      "\"gpu=h100\"");
  test::require_error(run({"--engine", "vllm", "--select", "hardware=b200"}), 2,
                      "--select: no measured point is selected");
  test::require_error(run({"--engine", "vllm", "--leave-out", "gpu"}), 2,
                      "--leave-out: expected model, tp, hardware or engine, got \"gpu\"");
  test::require_error(
      run({"--engine", "vllm", "--terms", "host.step_s", "hardware.kernels.gemm.fixed_s"}), 2,
      "fit hardware terms (hardware.*) and engine terms apart");
  test::require_error(run({"--terms", "hardware.kernels.gemm.fixed_s", "--leave-out", "hardware"}),
                      2, "--leave-out hardware: hardware terms fit one hardware profile");

  // Nothing half-written.
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("calibrate --measured fits a hardware profile's ceilings, which then load as a profile",
          "[engine_fit_cli]") {
  const test::ScratchDir dir("engine_fit_cli_hardware");
  const auto file = dir.write("points.csv", kPoints);
  const auto setup = dir.write("setup.json", R"({"source": "test", "hardware": "h100-sxm",
    "engine": "vllm", "knobs": {"max_num_seqs": 128, "max_model_len": 4096}})");
  const auto out = dir.path() / "h.json";
  const auto r = test::run_servesim(
      {"calibrate", "--measured", file.string(), "--setup", setup.string(), "--terms",
       "hardware.kernels.gemm.memory_efficiency", "--select", "hardware=h100-sxm",
       "--max-requests-per-point", "30", "--max-evaluations", "6", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("Fitted 1 terms of H100-SXM to 2 measured points") &&
                        Contains("leave one model out"));
  const HardwareProfile fitted = load_hardware_file(out);
  const HardwareProfile base = test::shipped_hardware("h100-sxm");
  // The term moved, so the predictions saw the profile it was written into.
  CHECK(fitted.kernels.gemm.memory_efficiency != base.kernels.gemm.memory_efficiency);
  CHECK(fitted.kernels.gemm.compute_efficiency == base.kernels.gemm.compute_efficiency);
  CHECK(fitted.name == base.name);
  CHECK_THAT(fitted.sources.at("kernels.gemm.memory_efficiency"),
             Contains("fitted by servesim calibrate --measured"));
  // What the profile was fitted from before is kept beside the serving fit.
  CHECK(fitted.calibration.at("tool") == base.calibration.at("tool"));
  CHECK(fitted.calibration.at("serving_fit").at("points") == 2);
  CHECK(fitted.calibration.at("serving_fit").at("selected") ==
        nlohmann::json::array({"hardware=h100-sxm"}));
}
