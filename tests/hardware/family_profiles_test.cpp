#include <catch2/catch.hpp>

#include "sim/core/json_reader.h"
#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A GPU without measurements of its own and the calibrated profile of its architecture family
// it takes its efficiencies, overheads and kernel ceilings from.
struct FamilyProfile {
  const char* name;
  const char* family;
};

constexpr FamilyProfile kFamilyProfiles[] = {
    {"rtx-4090", "l40s"},
    {"l4", "l40s"},
    {"rtx-pro-6000", "b200"},
    {"h20", "h100-sxm"},
};

void check_same_ceilings(const KernelCeilings& a, const KernelCeilings& b) {
  CHECK(a.compute_efficiency == b.compute_efficiency);
  CHECK(a.compute_half_size == b.compute_half_size);
  CHECK(a.memory_efficiency == b.memory_efficiency);
  CHECK(a.memory_half_size == b.memory_half_size);
  CHECK(a.fixed_s == b.fixed_s);
  CHECK(a.masked_pair_weight == b.masked_pair_weight);
  CHECK(a.quantization_weight == b.quantization_weight);
}

// Every fitted kernel ceiling of `own` is `theirs`: the classes and the per-operator GEMMs.
void check_same_kernels(const HardwareProfile& own, const HardwareProfile& theirs) {
  check_same_ceilings(own.kernels.gemm, theirs.kernels.gemm);
  check_same_ceilings(own.kernels.decode_attention, theirs.kernels.decode_attention);
  check_same_ceilings(own.kernels.prefill_attention, theirs.kernels.prefill_attention);
  for (const GemmOperator op : kGemmOperators) {
    INFO(gemm_operator_name(op));
    const auto& a = own.kernels.gemm_operators[static_cast<std::size_t>(op)];
    const auto& b = theirs.kernels.gemm_operators[static_cast<std::size_t>(op)];
    REQUIRE(a.has_value() == b.has_value());
    if (a) check_same_ceilings(*a, *b);
  }
}

}  // namespace

TEST_CASE("profiles without measurements load and cite a source for every number", "[hardware]") {
  for (const auto& [name, family] : kFamilyProfiles) {
    INFO(name);
    const auto path = test::source_dir() / "hw_profiles" / (std::string(name) + ".json");
    const HardwareProfile p = load_hardware_file(path);
    const auto numbers = numeric_key_paths(read_json_file(path), "sources");
    REQUIRE(numbers.size() >= 15);
    for (const auto& key : numbers) {
      INFO(key);
      REQUIRE(p.sources.count(key) == 1);
      REQUIRE(p.sources.at(key).size() > 10);
    }
    REQUIRE(p.supports(DType::BF16));
    REQUIRE(p.supports(DType::FP8));
    REQUIRE(p.sm_count > 0);
    REQUIRE(p.memory_capacity_bytes > p.runtime_reserved_bytes);
  }
}

TEST_CASE("profiles without measurements copy their family's efficiencies and say so",
          "[hardware]") {
  for (const auto& [name, family] : kFamilyProfiles) {
    INFO(name << " from " << family);
    const HardwareProfile p = test::shipped_hardware(name);
    const HardwareProfile f = test::shipped_hardware(family);
    CHECK(p.efficiency.gemm_compute == f.efficiency.gemm_compute);
    CHECK(p.efficiency.attention_compute == f.efficiency.attention_compute);
    CHECK(p.efficiency.memory_bandwidth == f.efficiency.memory_bandwidth);
    CHECK(p.efficiency.gpu_link == f.efficiency.gpu_link);
    CHECK(p.efficiency.host_link == f.efficiency.host_link);
    CHECK(p.overheads.kernel_launch_s == f.overheads.kernel_launch_s);
    // The H20 keeps the flat ceilings of its efficiencies: the H100's fitted small-GEMM
    // terms are costs in units of a peak 6.7 times its own (see its "comment"). The RTX PRO
    // 6000 keeps them too: the B200's kernel ceilings are fitted to TensorRT-LLM serving runs
    // of a GB100 with HBM3e, not to its GB202 with GDDR7.
    if (std::string(name) == "h20" || std::string(name) == "rtx-pro-6000") {
      CHECK(p.kernels.gemm.compute_half_size == 0);
      CHECK(p.kernels.gemm.quantization_weight == 0);
      CHECK(p.kernels.gemm.compute_efficiency == f.efficiency.gemm_compute);
      continue;
    }
    check_same_kernels(p, f);
    const std::string note = "from the " + std::string(family) +
                             " profile (same architecture), not measured on this GPU";
    for (const auto& [key, source] : p.sources) {
      if (key.starts_with("efficiency.") || key.starts_with("kernels.") ||
          key == "overheads.iteration_s" || key == "overheads.per_sequence_s") {
        INFO(key);
        CHECK_THAT(source, Contains(note));
      }
    }
  }
}

TEST_CASE("profiles without measurements carry their datasheet figures", "[hardware]") {
  const HardwareProfile rtx4090 = test::shipped_hardware("rtx-4090");
  CHECK(rtx4090.memory_bandwidth_bytes_per_s == 1.008e12);
  CHECK(rtx4090.peak_flops(DType::BF16) == 165.2e12);  // dense, FP32 accumulate
  CHECK(rtx4090.sm_count == 128);
  CHECK(rtx4090.host_link_bandwidth_bytes_per_s == 32e9);  // PCIe 4.0 x16
  const HardwareProfile l4 = test::shipped_hardware("l4");
  CHECK(l4.memory_bandwidth_bytes_per_s == 300e9);
  CHECK(l4.peak_flops(DType::FP16) == 121e12);  // 242 with sparsity
  CHECK(l4.peak_flops(DType::FP8) == 242.5e12);
  CHECK(l4.memory_capacity_bytes < 24e9 + 1e9);
  const HardwareProfile pro = test::shipped_hardware("rtx-pro-6000");
  CHECK(pro.memory_bandwidth_bytes_per_s == 1.792e12);
  CHECK(pro.memory_capacity_bytes > 96e9);
  CHECK(pro.sm_count == 188);
  CHECK(pro.peak_flops(DType::FP8) == Approx(2 * pro.peak_flops(DType::BF16)));
  CHECK(pro.host_link_bandwidth_bytes_per_s == 64e9);  // PCIe 5.0 x16
  const HardwareProfile h20 = test::shipped_hardware("h20");
  CHECK(h20.memory_bandwidth_bytes_per_s == 4e12);
  CHECK(h20.peak_flops(DType::BF16) == 148e12);
  CHECK(h20.gpu_link_bandwidth_bytes_per_s == 450e9);  // NVLink 900 GB/s total
  // The H20 trades compute for bandwidth: its balance point is 37 FLOP/B against the H100's 295.
  CHECK(h20.peak_flops(DType::BF16) / h20.memory_bandwidth_bytes_per_s == Approx(37).epsilon(0.01));
  // The PCIe cards have no NVLink: their GPU link is their PCIe link.
  for (const char* pcie : {"rtx-4090", "l4", "rtx-pro-6000"}) {
    INFO(pcie);
    const HardwareProfile p = test::shipped_hardware(pcie);
    CHECK(p.gpu_link_bandwidth_bytes_per_s == p.host_link_bandwidth_bytes_per_s);
  }
}

TEST_CASE("on profiles without measurements prefill is compute-bound and decode memory-bound",
          "[hardware]") {
  for (const char* model_name : {"llama-2-7b", "codellama-34b"}) {
    const ModelSpec model = test::shipped_model(model_name);
    for (const auto& [name, family] : kFamilyProfiles) {
      INFO(model_name << " on " << name);
      const RooflineModel roofline(model, test::shipped_hardware(name), RooflineOptions{});
      BatchShape prefill;
      prefill.add_prefill(2048, 0);
      CHECK(roofline.estimate(prefill).dominant_bound() == Bound::Compute);
      BatchShape decode;
      decode.add_decode(1024);
      CHECK(roofline.estimate(decode).dominant_bound() == Bound::Memory);
    }
  }
}

TEST_CASE("H200 keeps its measured flat efficiencies and takes the H100's kernel ceilings",
          "[hardware]") {
  // The same GH100 die as the H100 SXM with HBM3e: the same SMs and peaks, so the H100's
  // fitted kernel ceilings (shares of the peaks, and small-GEMM costs in units of the same
  // peak) carry over; its flat efficiencies were measured on an H200 and stay its own.
  const HardwareProfile h200 = test::shipped_hardware("h200");
  const HardwareProfile h100 = test::shipped_hardware("h100-sxm");
  CHECK(h200.sm_count == h100.sm_count);
  CHECK(h200.peak_flops(DType::FP8) == h100.peak_flops(DType::FP8));
  CHECK(h200.memory_bandwidth_bytes_per_s == 4.8e12);
  CHECK(h200.efficiency.memory_bandwidth == 0.85);
  check_same_kernels(h200, h100);
  const auto path = test::source_dir() / "hw_profiles" / "h200.json";
  for (const auto& key : numeric_key_paths(read_json_file(path), "sources")) {
    INFO(key);
    REQUIRE(h200.sources.count(key) == 1);
    if (key.starts_with("kernels.")) {
      CHECK_THAT(h200.sources.at(key),
                 Contains("from the h100-sxm profile (same architecture), not measured on this "
                          "GPU"));
    }
  }
  // A batch-1 decode stays memory-bound overall, and the larger bandwidth still pays.
  const ModelSpec model = test::shipped_model("llama-2-7b");
  BatchShape decode;
  decode.add_decode(1024);
  const auto on_h200 = RooflineModel(model, h200, RooflineOptions{}).estimate(decode);
  const auto on_h100 = RooflineModel(model, h100, RooflineOptions{}).estimate(decode);
  CHECK(on_h200.dominant_bound() == Bound::Memory);
  CHECK(on_h200.total_time_s < on_h100.total_time_s / 1.15);
}
