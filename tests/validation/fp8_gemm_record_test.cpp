#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/measurement.h"
#include "sim/calibration/prediction.h"
#include "tests/support/test_support.h"
#include "validation/harness_record.h"
#include "validation/measurement.h"

namespace sv = servesim::validation;
namespace test = servesim::test;

namespace {

const std::vector<double> kSamples_s{3e-5, 1e-5, 2e-5};

sv::Measurement timed(const sv::GemmShape& shape, sv::TimingMode mode, int calls) {
  sv::Measurement m = sv::make_measurement("NVIDIA H200", shape, kSamples_s);
  sv::set_timing(m, mode, calls);
  m.model = "meta-llama/Meta-Llama-3-8B";
  return m;
}

// The records as the harness writes them (write_harness_json, as harness_main does).
std::string harness_json(const std::vector<sv::Measurement>& measurements) {
  std::vector<sv::HarnessRecord> records;
  for (const sv::Measurement& m : measurements)
    records.push_back({m, nlohmann::json::object()});
  std::ostringstream out;
  sv::write_harness_json(out, "NVIDIA H200", records);
  return out.str();
}

}  // namespace

TEST_CASE("gemm --dtype fp8 records name fp8 operands, a bf16 output and cuBLASLt",
          "[validation][measurement][fp8_gemm]") {
  const sv::GemmShape fp8{"qkv", 16, 6144, 4096, sv::ElementType::BF16, true};
  const sv::GemmShape bf16{"qkv", 16, 6144, 4096, sv::ElementType::BF16};
  const nlohmann::json doc = nlohmann::json::parse(harness_json(
      {timed(fp8, sv::TimingMode::Graph, 20), timed(bf16, sv::TimingMode::Graph, 20)}));
  const nlohmann::json& r = doc.at("measurements").at(0);
  CHECK(r.at("operator_kind") == "gemm");
  CHECK(r.at("operator") == "qkv");
  CHECK(r.at("dtype") == "fp8");
  CHECK(r.at("activation_dtype") == "fp8");
  CHECK(r.at("output_dtype") == "bf16");
  CHECK(r.at("m") == 16);
  CHECK(r.at("n") == 6144);
  CHECK(r.at("k") == 4096);
  CHECK(r.at("timing") == "graph");
  CHECK(r.at("calls_per_sample") == 20);
  CHECK(r.at("median_s") == 2e-5);
  CHECK(r.at("kernel") == nlohmann::json{{"name", "cublasLt"}, {"cores", "tensor"}});
  CHECK_FALSE(r.contains("group_size"));
  // The 16-bit record of the same shape is unchanged: no formats or kernel of its own.
  const nlohmann::json& wide = doc.at("measurements").at(1);
  CHECK(wide.at("dtype") == "bf16");
  CHECK_FALSE(wide.contains("activation_dtype"));
  CHECK_FALSE(wide.contains("output_dtype"));
  CHECK_FALSE(wide.contains("kernel"));
  // Read back by the simulator: an FP8 class of its own, per timing.
  const std::vector<servesim::Measurement> read = servesim::measurements_from_json(doc, "f.json");
  REQUIRE(read.size() == 2);
  CHECK(read[0].class_name() == "gemm.qkv.fp8.graph");
  CHECK(read[0].dtype == servesim::DType::FP8);
  CHECK(read[0].activation_dtype == servesim::DType::FP8);
  CHECK(read[0].output_dtype == servesim::DType::BF16);
  CHECK(read[0].kernel->cores == "tensor");
  CHECK(read[1].class_name() == "gemm.qkv.graph");
}

TEST_CASE("servesim validate reads and prices the harness's fp8 gemm records",
          "[validation][measurement][fp8_gemm][cli]") {
  const sv::GemmShape graph{"qkv", 16, 6144, 4096, sv::ElementType::BF16, true};
  const sv::GemmShape per_call{"mlp_up", 4096, 28672, 4096, sv::ElementType::BF16, true};
  const sv::GemmShape wide{"mlp_up", 4096, 28672, 4096, sv::ElementType::BF16};
  const std::vector<sv::Measurement> records{timed(graph, sv::TimingMode::Graph, 20),
                                             timed(per_call, sv::TimingMode::PerCall, 0),
                                             timed(wide, sv::TimingMode::PerCall, 0)};
  const test::ScratchDir dir("fp8_gemm_validate");
  const auto file = dir.write("gemm_fp8.json", harness_json(records));
  const auto csv = dir.path() / "records.csv";
  const auto run = test::run_servesim({"validate", "--hw", "h200", "--measurements", file.string(),
                                       "--json", "--csv", csv.string()});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json classes = run.json().at("classes");
  CHECK(classes.at("gemm.qkv.fp8.graph").at("count") == 1);
  CHECK(classes.at("gemm.mlp_up.fp8").at("count") == 1);
  CHECK(classes.at("gemm.mlp_up").at("count") == 1);
  // Each record priced as the simulator prices it (prediction.h) with the shipped H200 profile.
  const auto classes_column = test::csv_column(csv, "class");
  const auto predicted = test::csv_column(csv, "predicted_s");
  REQUIRE(predicted.size() == 3);
  const servesim::HardwareProfile h200 = test::shipped_hardware("h200");
  const std::vector<servesim::Measurement> read =
      servesim::read_measurements_file(dir.path() / "gemm_fp8.json");
  std::map<std::string, double> by_class;
  for (std::size_t i = 0; i < predicted.size(); ++i)
    by_class[classes_column[i]] = std::stod(predicted[i]);
  for (const servesim::Measurement& m : read) {
    INFO(m.class_name());
    CHECK(by_class.at(m.class_name()) == Approx(servesim::predict_seconds(m, h200)).epsilon(1e-6));
  }
  // At 4,096 tokens the FP8 GEMM is priced with the FP8 peak: well below the bf16 one.
  CHECK(by_class.at("gemm.mlp_up.fp8") < 0.75 * by_class.at("gemm.mlp_up"));
}
