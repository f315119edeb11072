#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/measurement.h"
#include "validation/expert_routing.h"
#include "validation/harness_record.h"
#include "validation/kernel_info.h"

namespace sv = servesim::validation;

namespace {

const std::vector<double> kSamples_s{3e-5, 1e-5, 2e-5};

nlohmann::json written(const std::vector<sv::HarnessRecord>& records) {
  std::ostringstream out;
  sv::write_harness_json(out, "NVIDIA H200", records);
  return nlohmann::json::parse(out.str());
}

}  // namespace

TEST_CASE("GEMV kernels serve up to 16 token rows per pass", "[validation][kernel_info]") {
  CHECK(sv::gemv_rows_per_pass(1) == 1);
  CHECK(sv::gemv_rows_per_pass(2) == 2);
  CHECK(sv::gemv_rows_per_pass(3) == 4);
  CHECK(sv::gemv_rows_per_pass(5) == 8);
  CHECK(sv::gemv_rows_per_pass(16) == 16);
  CHECK(sv::gemv_rows_per_pass(17) == 16);
  CHECK(sv::gemv_rows_per_pass(64) == 16);
  CHECK_THROWS_AS(sv::gemv_rows_per_pass(0), std::invalid_argument);
  const sv::KernelInfo int4 = sv::quant_gemv_kernel(sv::WeightFormat::Int4, 3);
  CHECK(int4.name == "int4_gemv");
  CHECK(int4.kind == "gemv");
  CHECK(int4.cores == "cuda");
  CHECK(int4.tile_m == 4);
  CHECK(sv::quant_gemv_kernel(sv::WeightFormat::Fp8, 1).name == "fp8_gemv");
  const sv::KernelInfo grouped = sv::grouped_moe_kernel(64);
  CHECK(grouped.kind == "grouped");
  CHECK(grouped.cores == "tensor");
  CHECK(grouped.tile_m == 64);
  CHECK(grouped.tile_n == 64);
}

TEST_CASE("records without extra fields are written exactly as the simulator writes them",
          "[validation][measurement]") {
  const servesim::Measurement copy =
      sv::make_copy_measurement("NVIDIA H200", "memcpy_d2d", 1 << 20, kSamples_s);
  const servesim::Measurement gemm = sv::make_measurement(
      "NVIDIA H200", sv::GemmShape{"qkv", 16, 6144, 4096, sv::ElementType::BF16}, kSamples_s);
  const std::vector<servesim::Measurement> plain{copy, gemm};
  std::ostringstream expected;
  sv::write_measurements_json(expected, "NVIDIA H200", plain);
  std::ostringstream actual;
  sv::write_harness_json(actual, "NVIDIA H200",
                         std::vector<sv::HarnessRecord>{{copy, nlohmann::json::object()},
                                                        {gemm, nlohmann::json::object()}});
  CHECK(actual.str() == expected.str());
}

TEST_CASE("quant-gemm records name the weight format, activations and kernel",
          "[validation][measurement]") {
  const sv::QuantGemmShape int4{
      {"mlp_down", 5, 4096, 14336, sv::ElementType::FP16}, sv::WeightFormat::Int4, 64};
  const sv::QuantGemmShape fp8{
      {"qkv", 2, 6144, 4096, sv::ElementType::BF16}, sv::WeightFormat::Fp8, 128};
  const nlohmann::json doc = written({sv::make_record("NVIDIA H200", int4, kSamples_s),
                                      sv::make_record("NVIDIA H200", fp8, kSamples_s)});
  CHECK(doc.at("format") == "servesim-measurements");
  const nlohmann::json& a = doc.at("measurements").at(0);
  CHECK(a.at("operator_kind") == "gemm");
  CHECK(a.at("operator") == "mlp_down");
  CHECK(a.at("dtype") == "int4");
  CHECK(a.at("activation_dtype") == "fp16");
  CHECK(a.at("output_dtype") == "fp16");
  CHECK(a.at("group_size") == 64);
  CHECK(a.at("m") == 5);
  CHECK(a.at("k") == 14336);
  CHECK(a.at("median_s") == 2e-5);
  CHECK(a.at("kernel").at("name") == "int4_gemv");
  CHECK(a.at("kernel").at("kind") == "gemv");
  CHECK(a.at("kernel").at("tile_m") == 8);
  const nlohmann::json& b = doc.at("measurements").at(1);
  CHECK(b.at("dtype") == "fp8");
  CHECK(b.at("activation_dtype") == "fp8");
  CHECK(b.at("output_dtype") == "bf16");
  CHECK_FALSE(b.contains("group_size"));
  CHECK(b.at("kernel").at("name") == "fp8_gemv");
  CHECK(b.at("kernel").at("tile_m") == 2);
}

TEST_CASE("moe-gemm records carry the routing they ran", "[validation][measurement]") {
  // Three tokens top-2 of 4 experts (expert_routing_test's hand example): 3 experts touched,
  // 6 routed rows, 12 rows in tiles of 4.
  const std::vector<std::int32_t> routes{0, 2, 2, 3, 2, 0};
  const sv::ExpertGroups groups = sv::group_by_expert(routes, 4, 2, 4);
  sv::MoeGemmShape shape;
  shape.op = "mlp_up";
  shape.tokens = 3;
  shape.experts = 4;
  shape.top_k = 2;
  shape.n = 1536;
  shape.k = 2048;
  shape.tile_rows = 4;
  shape.seed = 9;
  sv::HarnessRecord record = sv::make_record("NVIDIA H200", shape, groups, kSamples_s);
  record.measurement.model = "Qwen/Qwen3-30B-A3B";
  const nlohmann::json r = written({record}).at("measurements").at(0);
  CHECK(r.at("operator_kind") == "moe_gemm");
  CHECK(r.at("operator") == "mlp_up");
  CHECK_FALSE(r.contains("m"));
  CHECK(r.at("tokens") == 3);
  CHECK(r.at("top_k") == 2);
  CHECK(r.at("experts") == 4);
  CHECK(r.at("experts_touched") == 3);
  CHECK(r.at("routed_rows") == 6);
  CHECK(r.at("padded_rows") == 12);
  CHECK(r.at("n") == 1536);
  CHECK(r.at("k") == 2048);
  CHECK(r.at("seed") == 9);
  CHECK(r.at("model") == "Qwen/Qwen3-30B-A3B");
  CHECK(r.at("kernel").at("kind") == "grouped");
  CHECK(r.at("kernel").at("tile_m") == 4);
  CHECK(r.at("repeats") == 3);
  // The simulator reads it back as the grouped kernel's record.
  const std::vector<servesim::Measurement> read =
      servesim::measurements_from_json(written({record}), "moe.json");
  REQUIRE(read.size() == 1);
  CHECK(read[0].kind == servesim::MeasurementKind::MoeGemm);
  CHECK(read[0].class_name() == "moe_gemm.mlp_up");
  CHECK(read[0].experts_touched == 3);
  CHECK(read[0].padded_rows == 12);
  CHECK(read[0].kernel->tile_m == 4);
}

TEST_CASE("the simulator reads the harness's quant-gemm records and prices them",
          "[validation][measurement]") {
  const sv::QuantGemmShape int4{
      {"mlp_up", 4, 28672, 4096, sv::ElementType::BF16}, sv::WeightFormat::Int4, 128};
  const sv::QuantGemmShape fp8{
      {"mlp_up", 4, 28672, 4096, sv::ElementType::BF16}, sv::WeightFormat::Fp8, 0};
  const nlohmann::json document = written({sv::make_record("NVIDIA H200", int4, kSamples_s),
                                           sv::make_record("NVIDIA H200", fp8, kSamples_s)});
  const std::vector<servesim::Measurement> read =
      servesim::measurements_from_json(document, "quant.json");
  REQUIRE(read.size() == 2);
  CHECK(read[0].dtype == servesim::DType::INT4);
  CHECK(read[0].kernel->name == "int4_gemv");
  CHECK(read[0].kernel->kind == "gemv");
  CHECK(read[0].activation_dtype == servesim::DType::BF16);
  CHECK(read[0].group_size == 128);
  CHECK(read[1].dtype == servesim::DType::FP8);
  CHECK(read[1].kernel->name == "fp8_gemv");
  CHECK(read[1].activation_dtype == servesim::DType::FP8);
  CHECK(read[1].group_size == 0);
  // A misspelt field of the kernel object is still refused, naming it.
  nlohmann::json bad = document;
  bad["measurements"][0]["kernel"]["tiles"] = 4;
  CHECK_THROWS_WITH(
      servesim::measurements_from_json(bad, "quant.json"),
      Catch::Matchers::Contains("measurements[0].kernel") && Catch::Matchers::Contains("tiles"));
}
