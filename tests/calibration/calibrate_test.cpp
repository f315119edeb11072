#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>

#include "sim/calibration/calibrate.h"
#include "sim/calibration/measurement_sources.h"
#include "sim/calibration/prediction.h"
#include "sim/calibration/vidur_import.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

std::filesystem::path vidur_root() {
  return test::shared_data_dir() / "profiles" / "vidur";
}

const char* const kGemmClasses[] = {"gemm.qkv", "gemm.o", "gemm.mlp_up", "gemm.mlp_down"};

}  // namespace

TEST_CASE("calibrated A100 and H100 profiles meet the leave-one-model-out targets",
          "[calibration][shared_data]") {
  if (!test::shared_data_path("profiles/vidur/compute")) return;
  for (const char* device : {"a100", "h100"}) {
    INFO(device);
    const auto loaded = load_measurement_inputs({}, vidur_root(), device);
    const HardwareProfile base =
        test::shipped_hardware(std::string(device) == "a100" ? "a100-80gb" : "h100-sxm");
    const CalibrationReport report = calibrate(loaded.records, base, loaded.files);
    for (const char* name : kGemmClasses) {
      INFO(name);
      REQUIRE(report.method.at(name).starts_with("leave-one-model-out"));
      CHECK(report.holdout.at(name).mape <= 0.10);
    }
    CHECK(report.holdout.at("all_reduce").mape <= 0.15);
    if (std::string(device) == "a100") {
      CHECK(report.holdout.at("decode_attention").mape <= 0.15);
      CHECK(report.holdout.at("prefill_attention").mape <= 0.15);
    }
    // The shipped profile is this fit: its predictions match the data as well.
    const HardwareProfile shipped =
        test::shipped_hardware(std::string(device) == "a100" ? "a100-80gb" : "h100-sxm");
    ErrorTable table;
    for (const Measurement& m : loaded.records) {
      if (m.kind == MeasurementKind::HostOverhead) continue;  // the engine's, not fitted here
      table.add(m.class_name(), predict_seconds(m, shipped), m.median_s);
    }
    const auto stats = table.summarize();
    for (const auto& [name, fit] : report.fit) {
      INFO(name);
      CHECK(stats.at(name).mape == Approx(fit.mape).margin(0.002));
    }
  }
}

TEST_CASE("servesim calibrate writes a profile that validate checks", "[calibration][cli]") {
  const test::ScratchDir dir("calibrate_cli");
  std::string records;
  // Large GEMMs at 0.6 of the A100's 312 TFLOP/s and small ones streaming at 0.8 of 2,039 GB/s.
  for (int m : {1, 2, 4, 8, 16, 512, 1024, 2048, 4096}) {
    const double flops = 2.0 * m * 4096 * 4096;
    const double bytes = 4096.0 * 4096 * 2 + m * 8192.0 * 2;
    const double t = std::max(flops / (0.6 * 312e12), bytes / (0.8 * 2.039e12)) + 3e-6;
    records += std::string(records.empty() ? "" : ",") +
               R"({"operator_kind": "gemm", "repeats": 10, "dtype": "fp16", "n": 4096, "k": 4096,
                   "m": )" +
               std::to_string(m) + R"(, "median_s": )" + std::to_string(t) + "}";
    // The same GEMMs named as the down projection: it gets ceilings of its own (and the
    // generic class, fitted to every GEMM record, is unchanged).
    records += R"(,{"operator_kind": "gemm", "operator": "mlp_down", "repeats": 10, "dtype": "fp16",
                   "n": 4096, "k": 4096, "m": )" +
               std::to_string(m) + R"(, "median_s": )" + std::to_string(t) + "}";
  }
  const auto measurements =
      dir.write("m.json", R"({"format": "servesim-measurements", "version": 1, "device": "A100",
                   "measurements": [)" +
                              records + "]}");
  const auto out = dir.path() / "fitted.json";
  const auto calibrated =
      test::run_servesim({"calibrate", "--measurements", measurements.string(), "--base",
                          "a100-80gb", "--out", out.string(), "--name", "A100-test"});
  INFO(calibrated.err);
  REQUIRE(calibrated.exit_code == 0);
  CHECK_THAT(calibrated.out,
             Contains("gemm (size = tokens)") && Contains("gemm_mlp_down: ") && Contains("A100"));
  CHECK_THAT(calibrated.out, !Contains("gemm_qkv: "));  // no records of its own
  const HardwareProfile fitted = load_hardware_file(out);
  CHECK(fitted.name == "A100-test");
  CHECK(fitted.kernels.gemm.compute_efficiency == Approx(0.6).epsilon(1e-3));
  CHECK(fitted.kernels.gemm.memory_efficiency == Approx(0.8).epsilon(1e-3));
  CHECK(fitted.calibration.at("files")[0].get<std::string>().ends_with("m.json"));

  const auto validated = test::run_servesim(
      {"validate", "--hw", out.string(), "--measurements", measurements.string(), "--json"});
  INFO(validated.err);
  REQUIRE(validated.exit_code == 0);
  const auto j = validated.json();
  CHECK(j.at("classes").at("gemm").at("count") == 9);
  CHECK(j.at("classes").at("gemm").at("mape").get<double>() < 0.01);  // 6-digit times
  // Per record (--csv): the summary's figures come from these rows.
  const auto csv_path = dir.path() / "records.csv";
  const auto per_record =
      test::run_servesim({"validate", "--hw", "a100-80gb", "--measurements", measurements.string(),
                          "--json", "--csv", csv_path.string()});
  REQUIRE(per_record.exit_code == 0);
  const auto summary = per_record.json().at("classes");
  const auto measured = test::csv_column(csv_path, "measured_s");
  const auto predicted = test::csv_column(csv_path, "predicted_s");
  const auto errors = test::csv_column(csv_path, "relative_error");
  const auto kinds = test::csv_column(csv_path, "kind");
  const auto operators = test::csv_column(csv_path, "operator");
  const auto classes = test::csv_column(csv_path, "class");
  REQUIRE(measured.size() == 18);
  std::map<std::string, std::pair<double, int>> ape_by_class;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double error = std::stod(predicted[i]) / std::stod(measured[i]) - 1;
    CHECK(std::stod(errors[i]) == Approx(error).margin(1e-8));
    CHECK(kinds[i] == "gemm");
    CHECK(classes[i] == (operators[i] == "mlp_down" ? "gemm.mlp_down" : "gemm"));
    ape_by_class[classes[i]].first += std::abs(error);
    ++ape_by_class[classes[i]].second;
  }
  REQUIRE(ape_by_class.size() == 2);
  for (const auto& [cls, sum] : ape_by_class) {
    CHECK(summary.at(cls).at("count") == sum.second);
    CHECK(summary.at(cls).at("mape").get<double>() == Approx(sum.first / sum.second).epsilon(1e-6));
  }
  const auto table = test::run_servesim(
      {"validate", "--hw", "a100-80gb", "--measurements", measurements.string()});
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("MAPE") && Contains("bias") && Contains("gemm"));

  const auto bad = test::run_servesim(
      {"validate", "--hw", "a100-80gb", "--measurements", dir.write("e.json", "").string()});
  CHECK(bad.exit_code == 3);
  CHECK_THAT(bad.err, Contains("e.json") && Contains("empty"));
  const auto none = test::run_servesim({"validate", "--hw", "a100-80gb"});
  CHECK(none.exit_code == 2);
}
