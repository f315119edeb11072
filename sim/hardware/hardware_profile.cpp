#include "sim/hardware/hardware_profile.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"

namespace servesim {
namespace {

constexpr std::array<DType, kDTypeCount> kAllDtypes{
    DType::FP32, DType::BF16, DType::FP16, DType::FP8, DType::INT8, DType::INT4, DType::FP4};

// Reads the class `name` over `k` (its defaults); false when the profile has no such class.
bool read_kernel_class(JsonObjectReader& kernels, std::string_view name, KernelCeilings& k,
                       bool gemm) {
  auto c = kernels.optional_object(name);
  if (!c) return false;
  const auto non_negative = [&](std::string_view key, double fallback) {
    const auto value = c->optional_number(key);
    if (value && *value < 0) c->fail(key, "expected a non-negative number");
    return value.value_or(fallback);
  };
  k.compute_efficiency = c->optional_fraction("compute_efficiency").value_or(k.compute_efficiency);
  k.compute_half_size = non_negative("compute_half_size", k.compute_half_size);
  k.memory_efficiency = c->optional_fraction("memory_efficiency").value_or(k.memory_efficiency);
  k.memory_half_size = non_negative("memory_half_size", k.memory_half_size);
  k.fixed_s = c->optional_seconds("fixed_s", kMaxStepCostS).value_or(k.fixed_s);
  k.masked_pair_weight = non_negative("masked_pair_weight", k.masked_pair_weight);
  if (gemm) {
    k.quantization_weight = non_negative("quantization_weight", k.quantization_weight);
    for (auto [key, tile] : {std::pair{"tile_m", &k.tile_m}, std::pair{"tile_n", &k.tile_n}}) {
      const auto value = c->optional_number(key);
      if (value && !(*value >= 1 && *value == std::floor(*value) && *value <= 4096)) {
        c->fail(key, "expected a whole number of rows or columns in [1, 4096]");
      }
      *tile = value.value_or(*tile);
    }
  }
  c->reject_unknown_keys();
  return true;
}

// "gemm_kernels": {"<weight format>": "<family>"}: each family only for the formats it runs,
// and a tensor-core family only where the profile has its peak.
void read_gemm_kernels(JsonObjectReader& g, HardwareProfile& p) {
  for (const DType d : kAllDtypes) {
    const std::string key(dtype_name(d));
    const auto name = g.optional_string(key);
    if (!name) continue;
    const auto family = parse_gemm_family(*name);
    if (!family) {
      g.fail(key, "unknown kernel family '" + *name + "' (expected one of: " + gemm_family_names() +
                      ")");
    }
    const bool sixteen = d == DType::FP32 || d == DType::BF16 || d == DType::FP16;
    bool fits = false;
    switch (*family) {
      case GemmFamily::Cublas:
        fits = sixteen;
        break;
      case GemmFamily::Marlin:
        fits = !sixteen;
        break;
      case GemmFamily::CutlassFp8:
        fits = d == DType::FP8;
        break;
      case GemmFamily::CutlassFp4:
        fits = d == DType::FP4;
        break;
    }
    if (!fits) {
      g.fail(key, "kernel family '" + *name + "' does not run " + key +
                      " weights (cublas: fp32, bf16, fp16; marlin: fp8, int8, int4, fp4; "
                      "cutlass_fp8: fp8; cutlass_fp4: fp4)");
    }
    const DType needs = gemm_family_compute_dtype(*family, DType::BF16);
    if (!p.supports(needs)) {
      g.fail(key, "kernel family '" + *name + "' runs on " + std::string(dtype_name(needs)) +
                      " tensor cores, but the profile has no peak_flops_per_s." +
                      std::string(dtype_name(needs)));
    }
    p.gemm_kernels[static_cast<std::size_t>(d)] = *family;
  }
  g.reject_unknown_keys();
}

std::string gemm_operator_key(GemmOperator op) {
  return "gemm_" + std::string(gemm_operator_name(op));
}

nlohmann::json kernel_class_to_json(const KernelCeilings& k, bool gemm) {
  nlohmann::json j = {{"compute_efficiency", k.compute_efficiency},
                      {"compute_half_size", k.compute_half_size},
                      {"memory_efficiency", k.memory_efficiency},
                      {"memory_half_size", k.memory_half_size},
                      {"fixed_s", k.fixed_s},
                      {"masked_pair_weight", k.masked_pair_weight}};
  if (gemm) {
    j["quantization_weight"] = k.quantization_weight;
    j["tile_m"] = k.tile_m;
    j["tile_n"] = k.tile_n;
  }
  return j;
}

// The memory, its bandwidth, the links, the price, the platform, the nodes and the SMs.
void read_device_figures(JsonObjectReader& r, HardwareProfile& p) {
  p.memory_capacity_bytes = r.positive_number("memory_capacity_bytes");
  p.memory_bandwidth_bytes_per_s =
      r.rate("memory_bandwidth_bytes_per_s", kMinBandwidthBytesPerS, "B/s");
  p.gpu_link_bandwidth_bytes_per_s =
      r.rate("gpu_link_bandwidth_bytes_per_s", kMinBandwidthBytesPerS, "B/s");
  p.host_link_bandwidth_bytes_per_s =
      r.rate("host_link_bandwidth_bytes_per_s", kMinBandwidthBytesPerS, "B/s");
  p.runtime_reserved_bytes = r.optional_number("runtime_reserved_bytes").value_or(0.0);
  if (p.runtime_reserved_bytes < 0 || p.runtime_reserved_bytes >= p.memory_capacity_bytes) {
    r.fail("runtime_reserved_bytes", "expected a value in [0, memory_capacity_bytes)");
  }
  p.memory_visible_bytes = r.optional_positive_number("memory_visible_bytes").value_or(0.0);
  if (p.memory_visible_bytes > p.memory_capacity_bytes) {
    r.fail("memory_visible_bytes", "expected at most memory_capacity_bytes");
  }
  p.price_per_gpu_hour_usd = r.optional_positive_number("price_per_gpu_hour_usd");
  p.platform = r.optional_string("platform").value_or(p.platform);
  if (p.platform != "cuda" && p.platform != "rocm") {
    r.fail("platform", "expected \"cuda\" or \"rocm\"");
  }
  p.architecture = r.optional_string("architecture").value_or("");
  if (const auto gpus = r.optional_number("gpus_per_node")) {
    if (!(*gpus >= 1 && *gpus == std::floor(*gpus) && *gpus <= 100000)) {
      r.fail("gpus_per_node", "expected a whole number of GPUs (at least 1)");
    }
    p.gpus_per_node = *gpus;
  }
  p.inter_node_bandwidth_bytes_per_s =
      r.optional_rate("inter_node_bandwidth_bytes_per_s", kMinBandwidthBytesPerS, "B/s")
          .value_or(0.0);
  p.inter_node_latency_s = r.optional_seconds("inter_node_latency_s", kMaxStepCostS).value_or(0.0);
  if (p.gpus_per_node > 0 && p.inter_node_bandwidth_bytes_per_s == 0) {
    r.fail("inter_node_bandwidth_bytes_per_s", "required with gpus_per_node");
  }
  if (const auto sms = r.optional_number("sm_count")) {
    if (!(*sms >= 1 && *sms == std::floor(*sms) && *sms <= 100000)) {
      r.fail("sm_count", "expected a whole number of streaming multiprocessors (at least 1)");
    }
    p.sm_count = *sms;
  }
}

// "peak_flops_per_s": {"<dtype>": FLOP/s}.
void read_peak_flops(JsonObjectReader& r, HardwareProfile& p) {
  JsonObjectReader peaks = r.object("peak_flops_per_s");
  for (const DType d : kAllDtypes) {
    if (const auto value = peaks.optional_rate(dtype_name(d), kMinFlopsPerS, "FLOP/s")) {
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
}

// "efficiency": the fractions of the peaks achieved.
void read_hardware_efficiency(JsonObjectReader& e, HardwareProfile& p) {
  p.efficiency.gemm_compute =
      e.optional_fraction("gemm_compute").value_or(p.efficiency.gemm_compute);
  p.efficiency.attention_compute =
      e.optional_fraction("attention_compute").value_or(p.efficiency.attention_compute);
  p.efficiency.memory_bandwidth =
      e.optional_fraction("memory_bandwidth").value_or(p.efficiency.memory_bandwidth);
  p.efficiency.gpu_link = e.optional_fraction("gpu_link").value_or(p.efficiency.gpu_link);
  p.efficiency.host_link = e.optional_fraction("host_link").value_or(p.efficiency.host_link);
  e.reject_unknown_keys();
}

// "overheads": the kernel launch and the collectives' latency.
void read_hardware_overheads(JsonObjectReader& o, HardwareProfile& p) {
  const auto read = [&](std::string_view key, double fallback) {
    return o.optional_seconds(key, kMaxStepCostS).value_or(fallback);
  };
  p.overheads.kernel_launch_s = read("kernel_launch_s", p.overheads.kernel_launch_s);
  for (const char* moved : {"iteration_s", "per_sequence_s"}) {
    if (o.has(moved)) {
      o.fail(moved,
             "host costs moved to engine profiles (engines/*.json, host.step_s and "
             "host.per_sequence_s): remove it from the hardware profile");
    }
  }
  p.overheads.collective_latency_s = read("collective_latency_s", p.overheads.collective_latency_s);
  o.reject_unknown_keys();
}

// "kernels": each class's ceilings, over the defaults that "efficiency" and "overheads" give.
void read_kernel_ceilings(JsonObjectReader& r, HardwareProfile& p) {
  const KernelCeilings gemm{p.efficiency.gemm_compute, 0, p.efficiency.memory_bandwidth, 0,
                            p.overheads.kernel_launch_s};
  const KernelCeilings attention{p.efficiency.attention_compute, 0, p.efficiency.memory_bandwidth,
                                 0, p.overheads.kernel_launch_s};
  p.kernels = {gemm, {}, attention, std::nullopt, std::nullopt, std::nullopt, attention};
  if (auto k = r.optional_object("kernels")) {
    read_kernel_class(*k, "gemm", p.kernels.gemm, true);
    // An operator's own class starts from "gemm": it may give only what differs.
    for (const GemmOperator op : kGemmOperators) {
      KernelCeilings own = p.kernels.gemm;
      if (read_kernel_class(*k, gemm_operator_key(op), own, true)) {
        p.kernels.gemm_operators[static_cast<std::size_t>(op)] = own;
      }
    }
    read_kernel_class(*k, "decode_attention", p.kernels.decode_attention, false);
    // The FP8-KV, MLA and windowed classes start from the 16-bit one: each may give only what
    // differs.
    const auto decode_class = [&](const char* key, std::optional<KernelCeilings>& own) {
      KernelCeilings ceilings = p.kernels.decode_attention;
      if (read_kernel_class(*k, key, ceilings, false)) own = ceilings;
    };
    decode_class("decode_attention_fp8_kv", p.kernels.decode_attention_fp8_kv);
    decode_class("decode_attention_mla", p.kernels.decode_attention_mla);
    decode_class("decode_attention_window", p.kernels.decode_attention_window);
    read_kernel_class(*k, "prefill_attention", p.kernels.prefill_attention, false);
    k->reject_unknown_keys();
  }
}

// "sources": where each number of the profile comes from.
void read_hardware_sources(JsonObjectReader& s, const nlohmann::json& document,
                           HardwareProfile& p) {
  auto numbers = numeric_key_paths(document, "sources");
  std::erase_if(numbers, [](const std::string& key) { return key.starts_with("calibration."); });
  for (const auto& [key, value] : document.at("sources").items()) {
    if (!value.is_string()) s.fail(key, "expected a string naming where the number comes from");
    if (std::find(numbers.begin(), numbers.end(), key) == numbers.end()) {
      s.fail(key, "names no number of this profile");
    }
    s.ignore(key);
    p.sources.emplace(key, value.get<std::string>());
  }
}

}  // namespace

std::string_view gemm_operator_name(GemmOperator op) noexcept {
  switch (op) {
    case GemmOperator::Qkv:
      return "qkv";
    case GemmOperator::Out:
      return "o";
    case GemmOperator::MlpUp:
      return "mlp_up";
    case GemmOperator::MlpDown:
      return "mlp_down";
  }
  return "?";
}

HardwareProfile hardware_from_json(const nlohmann::json& document, const std::string& source_name) {
  JsonObjectReader r(document, source_name);
  HardwareProfile p;
  p.source = source_name;
  p.name = r.string("name");
  p.description = r.optional_string("description").value_or("");
  read_device_figures(r, p);
  read_peak_flops(r, p);
  if (auto e = r.optional_object("efficiency")) read_hardware_efficiency(*e, p);
  if (auto o = r.optional_object("overheads")) read_hardware_overheads(*o, p);
  read_kernel_ceilings(r, p);
  if (auto g = r.optional_object("gemm_kernels")) read_gemm_kernels(*g, p);
  if (const nlohmann::json* calibration = r.optional_raw("calibration")) {
    if (!calibration->is_object()) r.fail("calibration", "expected a JSON object");
    p.calibration = *calibration;
  }
  if (auto s = r.optional_object("sources")) read_hardware_sources(*s, document, p);
  r.ignore("comment");
  r.reject_unknown_keys();
  return p;
}

GemmFamily gemm_family_for(const HardwareProfile& profile, DType weights, bool fp4_checkpoint) {
  if (const auto& named = profile.gemm_kernels[static_cast<std::size_t>(weights)]) return *named;
  switch (weights) {
    case DType::FP32:
    case DType::BF16:
    case DType::FP16:
      return GemmFamily::Cublas;
    case DType::FP8:
      return profile.supports(DType::FP8) ? GemmFamily::CutlassFp8 : GemmFamily::Marlin;
    case DType::INT8:
    case DType::INT4:
      return GemmFamily::Marlin;
    case DType::FP4:
      if (profile.supports(DType::FP4)) return GemmFamily::CutlassFp4;
      if (fp4_checkpoint) return GemmFamily::Marlin;
      throw InputError(profile.source + ": peak_flops_per_s.fp4",
                       "fp4 weights need FP4 tensor cores, which " + profile.name +
                           " lacks (no fp4 peak); weight-only FP4 kernels run FP4 checkpoints "
                           "(MXFP4, NVFP4) only, or name one in gemm_kernels.fp4");
  }
  return GemmFamily::Cublas;
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
        {"collective_latency_s", p.overheads.collective_latency_s}}},
      {"kernels",
       {{"gemm", kernel_class_to_json(p.kernels.gemm, true)},
        {"decode_attention", kernel_class_to_json(p.kernels.decode_attention, false)},
        {"prefill_attention", kernel_class_to_json(p.kernels.prefill_attention, false)}}},
      {"sources", p.sources},
  };
  for (const GemmOperator op : kGemmOperators) {
    if (const auto& own = p.kernels.gemm_operators[static_cast<std::size_t>(op)]) {
      j["kernels"][gemm_operator_key(op)] = kernel_class_to_json(*own, true);
    }
  }
  const std::pair<const char*, const std::optional<KernelCeilings>*> decode_classes[] = {
      {"decode_attention_fp8_kv", &p.kernels.decode_attention_fp8_kv},
      {"decode_attention_mla", &p.kernels.decode_attention_mla},
      {"decode_attention_window", &p.kernels.decode_attention_window}};
  for (const auto& [key, own] : decode_classes) {
    if (*own) j["kernels"][key] = kernel_class_to_json(**own, false);
  }
  if (p.sm_count > 0) j["sm_count"] = p.sm_count;
  if (p.memory_visible_bytes > 0) j["memory_visible_bytes"] = p.memory_visible_bytes;
  for (const DType d : kAllDtypes) {
    if (const auto& family = p.gemm_kernels[static_cast<std::size_t>(d)]) {
      j["gemm_kernels"][std::string(dtype_name(d))] = std::string(gemm_family_name(*family));
    }
  }
  if (p.gpus_per_node > 0) {
    j["gpus_per_node"] = p.gpus_per_node;
    j["inter_node_bandwidth_bytes_per_s"] = p.inter_node_bandwidth_bytes_per_s;
    j["inter_node_latency_s"] = p.inter_node_latency_s;
  }
  if (!p.calibration.is_null()) j["calibration"] = p.calibration;
  if (p.price_per_gpu_hour_usd) j["price_per_gpu_hour_usd"] = *p.price_per_gpu_hour_usd;
  if (p.platform != "cuda") j["platform"] = p.platform;
  if (!p.architecture.empty()) j["architecture"] = p.architecture;
  return j;
}

}  // namespace servesim
