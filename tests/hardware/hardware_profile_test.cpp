#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <regex>

#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

const char* const kShipped[] = {"a100-40gb", "a100-80gb", "h100-sxm",  "h200",     "l40s",
                                "b200",      "mi300x",    "h100-pcie", "h100-nvl", "a10g",
                                "l40",       "gb200",     "mi325x",    "mi355x"};

// Profiles with datasheet figures only: no calibration, every efficiency assumed.
const char* const kDatasheetOnly[] = {"h100-pcie", "h100-nvl", "a10g",  "l40",
                                      "gb200",     "mi325x",   "mi355x"};

// Profiles without a public, dated per-hour price (docs/studies.md).
const char* const kUnpriced[] = {"h20", "mi355x"};

std::string minimal_profile(const std::string& extra) {
  return R"({"name": "X", "memory_capacity_bytes": 8e10, "memory_bandwidth_bytes_per_s": 2e12,
             "gpu_link_bandwidth_bytes_per_s": 3e11, "host_link_bandwidth_bytes_per_s": 3.2e10,
             "peak_flops_per_s": {"bf16": 3e14})" +
         extra + "}";
}

}  // namespace

TEST_CASE("every shipped profile loads and cites a source for every number", "[hardware]") {
  for (const char* name : kShipped) {
    INFO(name);
    const auto path = test::source_dir() / "hw_profiles" / (std::string(name) + ".json");
    const HardwareProfile p = load_hardware_file(path);
    const auto numbers = numeric_key_paths(read_json_file(path), "sources");
    REQUIRE(numbers.size() >= 10);
    for (const auto& key : numbers) {
      INFO(key);
      if (key.starts_with("calibration.")) continue;  // fit metadata, not parameters
      REQUIRE(p.sources.count(key) == 1);
      REQUIRE(p.sources.at(key).size() > 10);
    }
    REQUIRE(p.supports(DType::BF16));
    REQUIRE(p.memory_capacity_bytes > p.runtime_reserved_bytes);
  }
}

TEST_CASE("shipped profiles carry a list price with its source and date", "[hardware]") {
  // The H20 is sold in China only; no dated public per-hour price of the MI355X was found.
  const std::regex dated(R"(\b20[0-9]{2}-[01][0-9]\b)");
  for (const auto& entry :
       std::filesystem::directory_iterator(test::source_dir() / "hw_profiles")) {
    const std::string name = entry.path().stem().string();
    INFO(name);
    const HardwareProfile p = load_hardware_file(entry.path());
    if (std::find(std::begin(kUnpriced), std::end(kUnpriced), name) != std::end(kUnpriced)) {
      CHECK_FALSE(p.price_per_gpu_hour_usd);
      continue;
    }
    REQUIRE(p.price_per_gpu_hour_usd);
    CHECK(*p.price_per_gpu_hour_usd > 0.1);
    CHECK(*p.price_per_gpu_hour_usd < 50);
    REQUIRE(p.sources.count("price_per_gpu_hour_usd") == 1);
    CHECK(std::regex_search(p.sources.at("price_per_gpu_hour_usd"), dated));
  }
}

TEST_CASE("shipped profiles carry the datasheet figures", "[hardware]") {
  const HardwareProfile a100 = test::shipped_hardware("a100-80gb");
  CHECK(a100.peak_flops(DType::BF16) == 312e12);
  CHECK(a100.memory_bandwidth_bytes_per_s == 2.039e12);
  CHECK_FALSE(a100.supports(DType::FP8));
  // The textbook balance points: 153 (A100-80GB), 295 (H100 SXM), 206 (H200) FLOP/B.
  CHECK(a100.peak_flops(DType::BF16) / a100.memory_bandwidth_bytes_per_s ==
        Approx(153).epsilon(0.01));
  const HardwareProfile h100 = test::shipped_hardware("h100-sxm");
  CHECK(h100.peak_flops(DType::BF16) / h100.memory_bandwidth_bytes_per_s ==
        Approx(295).epsilon(0.01));
  CHECK(h100.peak_flops(DType::FP8) == Approx(2 * h100.peak_flops(DType::BF16)).epsilon(0.001));
  const HardwareProfile h200 = test::shipped_hardware("h200");
  CHECK(h200.peak_flops(DType::BF16) / h200.memory_bandwidth_bytes_per_s ==
        Approx(206).epsilon(0.01));
  CHECK(h200.memory_capacity_bytes > 140e9);
  CHECK(test::shipped_hardware("mi300x").memory_capacity_bytes > 190e9);
  CHECK(test::shipped_hardware("b200").peak_flops(DType::BF16) == 2.25e15);
  CHECK(test::shipped_hardware("l40s").memory_bandwidth_bytes_per_s == 864e9);
  CHECK(test::shipped_hardware("a100-40gb").memory_bandwidth_bytes_per_s == 1.555e12);
}

TEST_CASE("datasheet-only profiles say so and carry their datasheet figures", "[hardware]") {
  for (const char* name : kDatasheetOnly) {
    INFO(name);
    const HardwareProfile p = test::shipped_hardware(name);
    CHECK_THAT(p.description, Contains("datasheet only"));
    CHECK(p.calibration.is_null());
    for (const auto& [key, source] : p.sources) {
      if (key.starts_with("efficiency.")) {
        INFO(key);
        CHECK_THAT(source, Contains("assumed: not calibrated for"));
      }
    }
    // As on every GPU: a long prefill is compute-bound, a batch-1 decode memory-bound.
    const RooflineModel roofline(test::shipped_model("llama-2-7b"), p, RooflineOptions{});
    BatchShape prefill;
    prefill.add_prefill(2048, 0);
    CHECK(roofline.estimate(prefill).dominant_bound() == Bound::Compute);
    CHECK(roofline.estimate(test::decode_batch(1, 1024)).dominant_bound() == Bound::Memory);
  }

  const HardwareProfile pcie = test::shipped_hardware("h100-pcie");
  CHECK(pcie.memory_bandwidth_bytes_per_s == 2.0e12);
  CHECK(pcie.peak_flops(DType::BF16) == 756.5e12);  // 1,513 with sparsity
  CHECK(pcie.peak_flops(DType::FP8) == 2 * pcie.peak_flops(DType::BF16));
  // nvidia-smi reads 81,559 MiB on both H100 80GB cards.
  CHECK(pcie.memory_capacity_bytes == test::shipped_hardware("h100-sxm").memory_capacity_bytes);
  CHECK(pcie.gpu_link_bandwidth_bytes_per_s == 64e9);  // no NVLink bridge: PCIe 5.0 x16
  CHECK(pcie.gpus_per_node == 0);

  const HardwareProfile nvl = test::shipped_hardware("h100-nvl");
  CHECK(nvl.memory_capacity_bytes == 95830.0 * 1024 * 1024);
  CHECK(nvl.memory_bandwidth_bytes_per_s == 3.9e12);
  CHECK(nvl.peak_flops(DType::BF16) == 835.5e12);       // 1,671 with sparsity
  CHECK(nvl.gpu_link_bandwidth_bytes_per_s == 300e9);   // NVLink bridge, 600 GB/s both ways
  CHECK(nvl.gpus_per_node == 2);                        // bridged pairs
  CHECK(nvl.inter_node_bandwidth_bytes_per_s == 64e9);  // beyond a pair: PCIe 5.0 x16

  const HardwareProfile a10g = test::shipped_hardware("a10g");
  CHECK(a10g.memory_capacity_bytes == 23028.0 * 1024 * 1024);
  CHECK(a10g.memory_bandwidth_bytes_per_s == 600e9);
  CHECK(a10g.peak_flops(DType::BF16) == 70e12);
  CHECK_FALSE(a10g.supports(DType::FP8));  // Ampere: no FP8 tensor cores
  CHECK(a10g.gpu_link_bandwidth_bytes_per_s == a10g.host_link_bandwidth_bytes_per_s);

  const HardwareProfile l40 = test::shipped_hardware("l40");
  const HardwareProfile l40s = test::shipped_hardware("l40s");
  CHECK(l40.memory_bandwidth_bytes_per_s == l40s.memory_bandwidth_bytes_per_s);
  CHECK(l40.peak_flops(DType::BF16) == 181.05e12);  // half the L40S's dense rate
  CHECK(l40.peak_flops(DType::FP8) == 362e12);
  CHECK(l40.memory_capacity_bytes == 48e9);  // datasheet GB, decimal

  const HardwareProfile gb200 = test::shipped_hardware("gb200");
  CHECK(gb200.gpus_per_node == 72);  // one NVLink domain per NVL72 rack
  CHECK(gb200.gpu_link_bandwidth_bytes_per_s == 900e9);
  CHECK(gb200.inter_node_bandwidth_bytes_per_s == 50e9);  // a 400 Gb/s NIC per GPU
  CHECK(gb200.memory_capacity_bytes == 189471.0 * 1024 * 1024);
  CHECK(gb200.memory_capacity_bytes > test::shipped_hardware("b200").memory_capacity_bytes);
  CHECK(gb200.peak_flops(DType::BF16) == 2.5e15);
  CHECK(gb200.peak_flops(DType::FP4) == 1e16);
  CHECK(gemm_family_for(gb200, DType::FP4, false) == GemmFamily::CutlassFp4);

  const HardwareProfile mi300x = test::shipped_hardware("mi300x");
  const HardwareProfile mi325x = test::shipped_hardware("mi325x");
  CHECK(mi325x.peak_flops(DType::BF16) == mi300x.peak_flops(DType::BF16));  // same CDNA 3 dies
  CHECK(mi325x.gpu_link_bandwidth_bytes_per_s == mi300x.gpu_link_bandwidth_bytes_per_s);
  CHECK(mi325x.memory_bandwidth_bytes_per_s == 6e12);
  CHECK(mi325x.memory_capacity_bytes == 256.0 * 1024 * 1024 * 1024);

  const HardwareProfile mi355x = test::shipped_hardware("mi355x");
  CHECK(mi355x.supports(DType::FP4));  // CDNA 4 has FP4 matrix cores
  CHECK(mi355x.peak_flops(DType::FP4) == Approx(2 * mi355x.peak_flops(DType::FP8)).epsilon(1e-4));
  CHECK(mi355x.peak_flops(DType::BF16) == 2.5166e15);
  CHECK(mi355x.memory_bandwidth_bytes_per_s == 8e12);
  CHECK(mi355x.memory_capacity_bytes == 288.0 * 1024 * 1024 * 1024);
  CHECK(mi355x.gpu_link_bandwidth_bytes_per_s == 537.6e9);  // 7 links of 153.6 GB/s, halved
  CHECK(gemm_family_for(mi355x, DType::FP4, false) == GemmFamily::CutlassFp4);
}

TEST_CASE("bad profiles are refused naming the field", "[hardware]") {
  const auto load = [](const std::string& text) {
    return hardware_from_json(parse_json_text(text, "p.json"), "p.json");
  };
  REQUIRE_NOTHROW(load(minimal_profile("")));
  REQUIRE(load(minimal_profile("")).peak_flops(DType::FP16) == 3e14);  // fp16 stands in
  REQUIRE_THROWS_WITH(load(minimal_profile(R"(, "memory_bandwith": 1)")),
                      Contains("p.json") && Contains("\"memory_bandwith\": unknown key"));
  REQUIRE_THROWS_WITH(load(minimal_profile(R"(, "efficiency": {"gemm_compute": 1.3})")),
                      Contains("efficiency.gemm_compute") && Contains("(0, 1]"));
  REQUIRE_THROWS_WITH(load(minimal_profile(R"(, "overheads": {"iteration_s": -1})")),
                      Contains("overheads.iteration_s"));
  REQUIRE_THROWS_WITH(load(minimal_profile(R"(, "sources": {"memory_bytes": "x"})")),
                      Contains("sources.memory_bytes") && Contains("names no number"));
  REQUIRE_THROWS_WITH(
      load(R"({"name": "X", "memory_capacity_bytes": 0, "memory_bandwidth_bytes_per_s": 2e12,
               "gpu_link_bandwidth_bytes_per_s": 1, "host_link_bandwidth_bytes_per_s": 1,
               "peak_flops_per_s": {"bf16": 1}})"),
      Contains("memory_capacity_bytes") && Contains("positive"));
  REQUIRE_THROWS_WITH(
      load(R"({"name": "X", "memory_capacity_bytes": 1e9, "memory_bandwidth_bytes_per_s": 2e12,
               "gpu_link_bandwidth_bytes_per_s": 1e9, "host_link_bandwidth_bytes_per_s": 1e9,
               "peak_flops_per_s": {"fp6": 1e12}})"),
      Contains("peak_flops_per_s.fp6"));
}

TEST_CASE("a profile survives a round trip through JSON", "[hardware]") {
  const HardwareProfile h100 = test::shipped_hardware("h100-sxm");
  const HardwareProfile again = hardware_from_json(hardware_to_json(h100), "again");
  REQUIRE(again.memory_capacity_bytes == h100.memory_capacity_bytes);
  REQUIRE(again.peak_flops_per_s == h100.peak_flops_per_s);
  REQUIRE(again.efficiency.gpu_link == h100.efficiency.gpu_link);
  REQUIRE(again.overheads.collective_latency_s == h100.overheads.collective_latency_s);
  REQUIRE(again.sources == h100.sources);
}

TEST_CASE("kernel classes default to the flat ceilings and read calibrated ones strictly",
          "[hardware]") {
  const auto load = [](const std::string& text) {
    return hardware_from_json(parse_json_text(text, "p.json"), "p.json");
  };
  const HardwareProfile flat = load(minimal_profile(
      R"(, "efficiency": {"gemm_compute": 0.6, "attention_compute": 0.4, "memory_bandwidth": 0.9},
          "overheads": {"kernel_launch_s": 3e-6})"));
  CHECK(flat.kernels.gemm.compute_efficiency == 0.6);
  CHECK(flat.kernels.gemm.memory_efficiency == 0.9);
  CHECK(flat.kernels.gemm.compute_half_size == 0);
  CHECK(flat.kernels.decode_attention.compute_efficiency == 0.4);
  CHECK(flat.kernels.prefill_attention.fixed_s == 3e-6);
  const HardwareProfile fitted = load(minimal_profile(
      R"(, "kernels": {"gemm": {"compute_efficiency": 0.75, "compute_half_size": 80},
                       "prefill_attention": {"masked_pair_weight": 1.2}},
          "calibration": {"files": ["profiles/x.csv"], "residuals": {"gemm": {"mape": 0.05}}})"));
  CHECK(fitted.kernels.gemm.compute_efficiency == 0.75);
  CHECK(fitted.kernels.gemm.compute_half_size == 80);
  CHECK(fitted.kernels.gemm.memory_efficiency == 0.75);  // the default, not given
  CHECK(fitted.kernels.prefill_attention.masked_pair_weight == 1.2);
  CHECK(fitted.calibration.at("files")[0] == "profiles/x.csv");
  const HardwareProfile again = hardware_from_json(hardware_to_json(fitted), "again");
  CHECK(again.kernels.gemm.compute_half_size == 80);
  CHECK(again.calibration == fitted.calibration);
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "kernels": {"gemm": {"half_size": 1}})")),
                    Contains("kernels.gemm.half_size") && Contains("unknown key"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "kernels": {"gemm": {"compute_half_size": -1}})")),
                    Contains("kernels.gemm.compute_half_size") && Contains("non-negative"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "kernels": {"gemm": {"compute_efficiency": 2}})")),
                    Contains("kernels.gemm.compute_efficiency") && Contains("(0, 1]"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "kernels": {"tensor": {}})")),
                    Contains("kernels.tensor") && Contains("unknown key"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "calibration": [1])")),
                    Contains("calibration") && Contains("object"));
}

TEST_CASE("GEMM operators may have their own ceilings and the wave term its SM count",
          "[hardware]") {
  const auto load = [](const std::string& text) {
    return hardware_from_json(parse_json_text(text, "p.json"), "p.json");
  };
  const HardwareProfile plain = load(minimal_profile(""));
  CHECK(plain.sm_count == 0);  // unknown: no wave quantization
  CHECK(plain.kernels.gemm.quantization_weight == 0);
  CHECK(plain.kernels.gemm.tile_m == 128);
  CHECK(&plain.kernels.gemm_for(GemmOperator::MlpDown) == &plain.kernels.gemm);

  const HardwareProfile split = load(minimal_profile(
      R"(, "sm_count": 132,
          "kernels": {"gemm": {"compute_efficiency": 0.75, "quantization_weight": 0.2,
                               "tile_n": 256},
                      "gemm_mlp_down": {"compute_efficiency": 0.8}})"));
  CHECK(split.sm_count == 132);
  const KernelCeilings& down = split.kernels.gemm_for(GemmOperator::MlpDown);
  CHECK(down.compute_efficiency == 0.8);
  CHECK(down.quantization_weight == 0.2);  // what it does not give comes from "gemm"
  CHECK(down.tile_n == 256);
  CHECK(split.kernels.gemm_for(GemmOperator::Qkv).compute_efficiency == 0.75);
  CHECK(gemm_tiling(split, down).sm_count == 132);
  const HardwareProfile again = hardware_from_json(hardware_to_json(split), "again");
  CHECK(again.sm_count == 132);
  CHECK(again.kernels.gemm_for(GemmOperator::MlpDown).compute_efficiency == 0.8);
  CHECK_FALSE(again.kernels.gemm_operators[0].has_value());

  CHECK_THROWS_WITH(load(minimal_profile(R"(, "sm_count": 0)")),
                    Contains("p.json") && Contains("sm_count") && Contains("whole number"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "sm_count": 13.5)")), Contains("sm_count"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "kernels": {"gemm": {"tile_m": 0}})")),
                    Contains("kernels.gemm.tile_m") && Contains("whole number"));
  CHECK_THROWS_WITH(
      load(minimal_profile(R"(, "kernels": {"gemm_o": {"quantization_weight": -0.1}})")),
      Contains("kernels.gemm_o.quantization_weight") && Contains("non-negative"));
  // Tiles and quantization belong to GEMMs only.
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "kernels": {"decode_attention": {"tile_m": 64}})")),
                    Contains("kernels.decode_attention.tile_m") && Contains("unknown key"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "kernels": {"gemm_lm_head": {}})")),
                    Contains("kernels.gemm_lm_head") && Contains("unknown key"));
}
TEST_CASE("a profile may name the GEMM kernel family per weight format", "[hardware]") {
  const auto load = [](const std::string& text) {
    return hardware_from_json(parse_json_text(text, "p.json"), "p.json");
  };
  // Defaults: by the device's tensor-core formats.
  const HardwareProfile plain = load(minimal_profile(""));
  CHECK(gemm_family_for(plain, DType::BF16, false) == GemmFamily::Cublas);
  CHECK(gemm_family_for(plain, DType::FP8, false) == GemmFamily::Marlin);
  CHECK(gemm_family_for(plain, DType::INT4, false) == GemmFamily::Marlin);
  CHECK(gemm_family_for(plain, DType::FP4, true) == GemmFamily::Marlin);
  CHECK_THROWS_WITH(gemm_family_for(plain, DType::FP4, false),
                    Contains("p.json: peak_flops_per_s.fp4"));
  const HardwareProfile h100 = test::shipped_hardware("h100-sxm");
  CHECK(gemm_family_for(h100, DType::FP8, false) == GemmFamily::CutlassFp8);
  CHECK(gemm_family_for(test::shipped_hardware("b200"), DType::FP4, false) ==
        GemmFamily::CutlassFp4);
  // Named: kept, and through a round trip.
  const HardwareProfile named = load(
      R"({"name": "X", "memory_capacity_bytes": 8e10, "memory_bandwidth_bytes_per_s": 2e12,
               "gpu_link_bandwidth_bytes_per_s": 3e11, "host_link_bandwidth_bytes_per_s": 3.2e10,
               "peak_flops_per_s": {"bf16": 3e14, "fp8": 6e14},
               "gemm_kernels": {"fp4": "marlin"}})");
  CHECK(gemm_family_for(named, DType::FP4, false) == GemmFamily::Marlin);
  CHECK(gemm_family_for(named, DType::FP8, false) == GemmFamily::CutlassFp8);
  const HardwareProfile again = hardware_from_json(hardware_to_json(named), "again");
  CHECK(gemm_family_for(again, DType::FP4, false) == GemmFamily::Marlin);
  // Refused, naming the field: an unknown family, a family for formats it does not run, a
  // tensor-core family without its peak, an unknown format.
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "gemm_kernels": {"int4": "machete2"})")),
                    Contains("gemm_kernels.int4") && Contains("unknown kernel family 'machete2'") &&
                        Contains("marlin"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "gemm_kernels": {"bf16": "marlin"})")),
                    Contains("gemm_kernels.bf16") && Contains("does not run bf16"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "gemm_kernels": {"fp4": "cutlass_fp4"})")),
                    Contains("gemm_kernels.fp4") && Contains("peak_flops_per_s.fp4"));
  CHECK_THROWS_WITH(load(minimal_profile(R"(, "gemm_kernels": {"fp6": "marlin"})")),
                    Contains("fp6"));
}
