#include "sim/hardware/hardware_profile.h"

#include <algorithm>

#include "sim/config/json_reader.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr std::array<DType, 6> kAllDtypes{DType::FP32, DType::BF16, DType::FP16,
                                          DType::FP8,  DType::INT8, DType::INT4};

void read_kernel_class(JsonObjectReader& kernels, std::string_view name, KernelCeilings& k) {
  auto c = kernels.optional_object(name);
  if (!c) return;
  const auto non_negative = [&](std::string_view key, double fallback) {
    const auto value = c->optional_number(key);
    if (value && *value < 0) c->fail(key, "expected a non-negative number");
    return value.value_or(fallback);
  };
  k.compute_efficiency = c->optional_fraction("compute_efficiency").value_or(k.compute_efficiency);
  k.compute_half_size = non_negative("compute_half_size", k.compute_half_size);
  k.memory_efficiency = c->optional_fraction("memory_efficiency").value_or(k.memory_efficiency);
  k.memory_half_size = non_negative("memory_half_size", k.memory_half_size);
  k.fixed_s = non_negative("fixed_s", k.fixed_s);
  k.masked_pair_weight = non_negative("masked_pair_weight", k.masked_pair_weight);
  c->reject_unknown_keys();
}

nlohmann::json kernel_class_to_json(const KernelCeilings& k) {
  return {{"compute_efficiency", k.compute_efficiency},
          {"compute_half_size", k.compute_half_size},
          {"memory_efficiency", k.memory_efficiency},
          {"memory_half_size", k.memory_half_size},
          {"fixed_s", k.fixed_s},
          {"masked_pair_weight", k.masked_pair_weight}};
}

}  // namespace

HardwareProfile hardware_from_json(const nlohmann::json& document, const std::string& source_name) {
  JsonObjectReader r(document, source_name);
  HardwareProfile p;
  p.source = source_name;
  p.name = r.string("name");
  p.description = r.optional_string("description").value_or("");
  p.memory_capacity_bytes = r.positive_number("memory_capacity_bytes");
  p.memory_bandwidth_bytes_per_s = r.positive_number("memory_bandwidth_bytes_per_s");
  p.gpu_link_bandwidth_bytes_per_s = r.positive_number("gpu_link_bandwidth_bytes_per_s");
  p.host_link_bandwidth_bytes_per_s = r.positive_number("host_link_bandwidth_bytes_per_s");
  p.runtime_reserved_bytes = r.optional_number("runtime_reserved_bytes").value_or(0.0);
  if (p.runtime_reserved_bytes < 0 || p.runtime_reserved_bytes >= p.memory_capacity_bytes) {
    r.fail("runtime_reserved_bytes", "expected a value in [0, memory_capacity_bytes)");
  }
  p.price_per_gpu_hour_usd = r.optional_positive_number("price_per_gpu_hour_usd");

  JsonObjectReader peaks = r.object("peak_flops_per_s");
  for (const DType d : kAllDtypes) {
    if (const auto value = peaks.optional_positive_number(dtype_name(d))) {
      p.peak_flops_per_s[static_cast<std::size_t>(d)] = *value;
    }
  }
  peaks.reject_unknown_keys();
  // fp16 and bf16 run on the same tensor cores: one stands in for the other.
  auto& bf16 = p.peak_flops_per_s[static_cast<std::size_t>(DType::BF16)];
  auto& fp16 = p.peak_flops_per_s[static_cast<std::size_t>(DType::FP16)];
  if (bf16 == 0) bf16 = fp16;
  if (fp16 == 0) fp16 = bf16;
  if (bf16 == 0) r.fail("peak_flops_per_s", "needs a bf16 or fp16 entry");

  if (auto e = r.optional_object("efficiency")) {
    p.efficiency.gemm_compute =
        e->optional_fraction("gemm_compute").value_or(p.efficiency.gemm_compute);
    p.efficiency.attention_compute =
        e->optional_fraction("attention_compute").value_or(p.efficiency.attention_compute);
    p.efficiency.memory_bandwidth =
        e->optional_fraction("memory_bandwidth").value_or(p.efficiency.memory_bandwidth);
    p.efficiency.gpu_link = e->optional_fraction("gpu_link").value_or(p.efficiency.gpu_link);
    p.efficiency.host_link = e->optional_fraction("host_link").value_or(p.efficiency.host_link);
    e->reject_unknown_keys();
  }
  if (auto o = r.optional_object("overheads")) {
    const auto read = [&](std::string_view key, double fallback) {
      const auto value = o->optional_number(key);
      if (value && *value < 0) o->fail(key, "expected a non-negative duration in seconds");
      return value.value_or(fallback);
    };
    p.overheads.kernel_launch_s = read("kernel_launch_s", p.overheads.kernel_launch_s);
    p.overheads.iteration_s = read("iteration_s", p.overheads.iteration_s);
    p.overheads.per_sequence_s = read("per_sequence_s", p.overheads.per_sequence_s);
    p.overheads.collective_latency_s =
        read("collective_latency_s", p.overheads.collective_latency_s);
    o->reject_unknown_keys();
  }
  const KernelCeilings gemm{p.efficiency.gemm_compute, 0, p.efficiency.memory_bandwidth, 0,
                            p.overheads.kernel_launch_s};
  const KernelCeilings attention{p.efficiency.attention_compute, 0, p.efficiency.memory_bandwidth,
                                 0, p.overheads.kernel_launch_s};
  p.kernels = {gemm, attention, attention};
  if (auto k = r.optional_object("kernels")) {
    read_kernel_class(*k, "gemm", p.kernels.gemm);
    read_kernel_class(*k, "decode_attention", p.kernels.decode_attention);
    read_kernel_class(*k, "prefill_attention", p.kernels.prefill_attention);
    k->reject_unknown_keys();
  }
  if (const nlohmann::json* calibration = r.optional_raw("calibration")) {
    if (!calibration->is_object()) r.fail("calibration", "expected a JSON object");
    p.calibration = *calibration;
  }
  if (auto s = r.optional_object("sources")) {
    auto numbers = numeric_key_paths(document, "sources");
    std::erase_if(numbers, [](const std::string& key) { return key.starts_with("calibration."); });
    for (const auto& [key, value] : document.at("sources").items()) {
      if (!value.is_string()) s->fail(key, "expected a string naming where the number comes from");
      if (std::find(numbers.begin(), numbers.end(), key) == numbers.end()) {
        s->fail(key, "names no number of this profile");
      }
      s->ignore(key);
      p.sources.emplace(key, value.get<std::string>());
    }
  }
  r.ignore("comment");
  r.reject_unknown_keys();
  return p;
}

HardwareProfile load_hardware_file(const std::filesystem::path& path) {
  return hardware_from_json(read_json_file(path), path.string());
}

nlohmann::json hardware_to_json(const HardwareProfile& p) {
  nlohmann::json peaks = nlohmann::json::object();
  for (const DType d : kAllDtypes) {
    if (p.supports(d)) peaks[std::string(dtype_name(d))] = p.peak_flops(d);
  }
  nlohmann::json j = {
      {"name", p.name},
      {"description", p.description},
      {"memory_capacity_bytes", p.memory_capacity_bytes},
      {"memory_bandwidth_bytes_per_s", p.memory_bandwidth_bytes_per_s},
      {"peak_flops_per_s", peaks},
      {"gpu_link_bandwidth_bytes_per_s", p.gpu_link_bandwidth_bytes_per_s},
      {"host_link_bandwidth_bytes_per_s", p.host_link_bandwidth_bytes_per_s},
      {"runtime_reserved_bytes", p.runtime_reserved_bytes},
      {"efficiency",
       {{"gemm_compute", p.efficiency.gemm_compute},
        {"attention_compute", p.efficiency.attention_compute},
        {"memory_bandwidth", p.efficiency.memory_bandwidth},
        {"gpu_link", p.efficiency.gpu_link},
        {"host_link", p.efficiency.host_link}}},
      {"overheads",
       {{"kernel_launch_s", p.overheads.kernel_launch_s},
        {"iteration_s", p.overheads.iteration_s},
        {"per_sequence_s", p.overheads.per_sequence_s},
        {"collective_latency_s", p.overheads.collective_latency_s}}},
      {"kernels",
       {{"gemm", kernel_class_to_json(p.kernels.gemm)},
        {"decode_attention", kernel_class_to_json(p.kernels.decode_attention)},
        {"prefill_attention", kernel_class_to_json(p.kernels.prefill_attention)}}},
      {"sources", p.sources},
  };
  if (!p.calibration.is_null()) j["calibration"] = p.calibration;
  if (p.price_per_gpu_hour_usd) j["price_per_gpu_hour_usd"] = *p.price_per_gpu_hour_usd;
  return j;
}

}  // namespace servesim
