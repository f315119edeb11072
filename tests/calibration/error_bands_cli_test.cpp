// Error bands end to end: the shipped residuals (engines/bands) are what `validate
// --write-bands` gives on the shared files with this commit's profiles, and run, capacity and
// summary.json carry the bands they give.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/core/json_reader.h"
#include "sim/metrics/error_bands.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// The files the shipped bands were written from (docs/validation.md, Error bands).
const std::vector<std::string> kBandFiles{"vllm-0.15.1-h100-sxm.csv", "trtllm-0.9.0-static-fp8.csv",
                                          "inferencex-llama-3.3-70b-fp8.csv",
                                          "gpustack-perflab.csv", "vllm-2023-opt13b-a100-40gb.csv"};

}  // namespace

TEST_CASE("the shipped error bands are what validate writes for this commit's profiles",
          "[error_bands][shared_data]") {
  std::vector<std::string> args{"validate", "--measured"};
  for (const std::string& file : kBandFiles) {
    const auto path = test::shared_data_path("measured/" + file);
    if (!path) return;
    args.push_back(path->string());
  }
  const test::ScratchDir dir("servesim_bands");
  args.insert(args.end(), {"--write-bands", dir.path().string()});
  const auto r = test::run_servesim(args);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("Error bands by deployment class"));
  std::size_t engines = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++engines;
    const std::string name = entry.path().filename().string();
    INFO(name << ": regenerate engines/bands with the command in docs/validation.md");
    const auto shipped = test::source_dir() / "engines" / "bands" / name;
    REQUIRE(std::filesystem::exists(shipped));
    const ErrorBands written =
        ErrorBands::from_json(read_json_file(entry.path()), entry.path().string());
    const ErrorBands ours = ErrorBands::from_json(read_json_file(shipped), shipped.string());
    REQUIRE(written.residuals().size() == ours.residuals().size());
    for (std::size_t i = 0; i < ours.residuals().size(); ++i) {
      const BandResidual& a = written.residuals()[i];
      const BandResidual& b = ours.residuals()[i];
      INFO(b.where);
      CHECK(a.where == b.where);
      CHECK(a.deployment == b.deployment);
      for (std::size_t m = 0; m < kBandMetricCount; ++m) {
        REQUIRE(a.measured_over_predicted[m].has_value() ==
                b.measured_over_predicted[m].has_value());
        if (a.measured_over_predicted[m])
          CHECK(*a.measured_over_predicted[m] == Approx(*b.measured_over_predicted[m]));
      }
    }
  }
  CHECK(engines == 6);
}

TEST_CASE("run prints its headline figures with their error bands, or why there are none",
          "[error_bands]") {
  const auto covered = test::run_servesim({"run", "--num-requests", "300", "--json"});
  REQUIRE(covered.exit_code == 0);
  const nlohmann::json bands = covered.json().at("error_bands");
  CHECK(bands.at("deployment").at("engine") == "vllm");
  CHECK(bands.at("deployment").at("hardware_class") == "hopper");
  CHECK(bands.at("deployment").at("model_family") == "dense");
  REQUIRE(bands.contains("ttft"));
  CHECK(bands.at("ttft").at("points").get<int>() >= 5);
  CHECK(bands.at("ttft").at("low").get<double>() <= bands.at("ttft").at("high").get<double>());
  CHECK_FALSE(bands.contains("uncovered"));

  const auto text = test::run_servesim({"run", "--num-requests", "300"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Contains("  TTFT p99 ") && Contains(" points of this engine"));

  // No calibration of vLLM on AMD's CDNA 3: the run says so, once.
  const auto amd = test::run_servesim({"run", "--hw", "mi300x", "--num-requests", "300"});
  REQUIRE(amd.exit_code == 0);
  CHECK_THAT(amd.out, Contains("Error bands: none for vllm on cdna3, dense models") &&
                          Contains("no calibration covers vllm on cdna3 GPUs (validated on "));
  CHECK_THAT(amd.out, !Contains("TTFT p99 "));
}

TEST_CASE("capacity --plan-at upper sizes for the bands' pessimistic edge", "[error_bands]") {
  const auto capacity = [](const std::string& tpot_limit_s, const char* plan_at) {
    const auto r =
        test::run_servesim({"capacity", "--target-rate", "30", "--num-requests", "1500", "--slo",
                            "tpot_p99=" + tpot_limit_s, "--plan-at", plan_at, "--json"});
    REQUIRE(r.exit_code == 0);
    return r.json();
  };
  // One H100 serves Llama-3-8B at 30 req/s: its TPOT p99 and the band's upper edge there.
  const nlohmann::json loose = capacity("1", "prediction");
  const nlohmann::json& one = loose.at("shapes").at(0);
  REQUIRE(one.at("replicas") == 1);
  REQUIRE(one.contains("error_bands"));
  const double tpot_p99_s = one.at("points").at(0).at("summary").at("tpot_s").at("p99");
  const double high = one.at("error_bands").at("tpot").at("high");
  INFO("TPOT p99 " << tpot_p99_s << " s, band's upper edge " << high);
  REQUIRE(high > 0);  // vLLM on Hopper: at the edge, measured TPOT above the prediction
  // A limit between the prediction and its upper edge: one replica as predicted, more at the
  // edge.
  const std::string limit = std::to_string(tpot_p99_s * (1 + high / 2));
  CHECK(capacity(limit, "prediction").at("shapes").at(0).at("replicas") == 1);
  const nlohmann::json upper = capacity(limit, "upper");
  CHECK(upper.at("shapes").at(0).at("replicas").get<int>() >= 2);
  CHECK_THAT(upper.at("slo").dump(), Contains("upper edge"));

  const auto refused = test::run_servesim(
      {"capacity", "--target-rate", "30", "--slo", "tpot_p99=0.02", "--plan-at", "median"});
  CHECK(refused.exit_code == 3);
  CHECK_THAT(refused.err, Contains("--plan-at") && Contains("expected prediction or upper"));
}
