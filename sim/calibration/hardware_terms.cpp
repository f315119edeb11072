#include "sim/calibration/hardware_terms.h"

#include <array>
#include <cstdlib>
#include <optional>
#include <set>
#include <string_view>

#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr std::array<std::string_view, 10> kKernelClasses = {"gemm",
                                                             "gemm_qkv",
                                                             "gemm_o",
                                                             "gemm_mlp_up",
                                                             "gemm_mlp_down",
                                                             "decode_attention",
                                                             "prefill_attention",
                                                             "decode_attention_fp8_kv",
                                                             "decode_attention_mla",
                                                             "decode_attention_window"};
// Classes that refine decode_attention: a profile without one starts it from that class.
constexpr std::array<std::string_view, 3> kDecodeRefinements = {
    "decode_attention_fp8_kv", "decode_attention_mla", "decode_attention_window"};

// The decode-attention refinement `path` ("kernels.CLASS.FIELD") belongs to, if any.
std::optional<std::string> refined_class(const std::string& path) {
  for (const std::string_view own : kDecodeRefinements) {
    if (path.starts_with("kernels." + std::string(own) + ".")) return std::string(own);
  }
  return std::nullopt;
}
constexpr std::array<std::string_view, 4> kKernelFields = {
    "compute_efficiency", "memory_efficiency", "fixed_s", "compute_half_size"};

// The term's path in the profile: "kernels.gemm.fixed_s" of "hardware.kernels.gemm.fixed_s".
std::string path_of(const std::string& term) {
  return term.substr(std::string_view(kHardwareTermPrefix).size());
}

nlohmann::json::json_pointer pointer_of(const std::string& path) {
  std::string p = "/" + path;
  for (char& c : p) {
    if (c == '.') c = '/';
  }
  return nlohmann::json::json_pointer(p);
}

const std::set<std::string>& fittable_paths() {
  static const std::set<std::string> paths = [] {
    std::set<std::string> out = {"overheads.collective_latency_s", "efficiency.gpu_link"};
    for (std::string_view k : kKernelClasses) {
      for (std::string_view f : kKernelFields)
        out.insert("kernels." + std::string(k) + "." + std::string(f));
    }
    return out;
  }();
  return paths;
}

}  // namespace

bool is_hardware_term(const std::string& term) {
  return term.starts_with(kHardwareTermPrefix) && fittable_paths().count(path_of(term)) != 0;
}

std::pair<double, double> hardware_term_range(const std::string& term) {
  if (term.ends_with("_efficiency") || term.ends_with("gpu_link")) return {0.05, 1.0};
  if (term.ends_with("fixed_s")) return {1e-7, 1e-4};
  if (term.ends_with("latency_s")) return {1e-6, 1e-4};
  if (term.ends_with("half_size")) return {0.0, 1e4};
  return {0, 1};
}

double hardware_term(const nlohmann::json& profile, const std::string& term) {
  const std::string path = path_of(term);
  nlohmann::json::json_pointer pointer = pointer_of(path);
  // A class the profile lacks starts from the one it refines.
  if (const auto own = refined_class(path); own && !profile.contains(pointer)) {
    pointer =
        pointer_of("kernels.decode_attention." + path.substr(("kernels." + *own + ".").size()));
  }
  if (!profile.contains(pointer) || !profile.at(pointer).is_number()) {
    throw InputError("--terms", "the hardware profile has no number at \"" + path + "\"");
  }
  return profile.at(pointer).get<double>();
}

nlohmann::json hardware_with_terms(nlohmann::json profile,
                                   const std::map<std::string, double>& terms) {
  for (const auto& [term, value] : terms) {
    const std::string path = path_of(term);
    if (const auto own = refined_class(path);
        own && !profile.contains(pointer_of("kernels." + *own))) {
      profile["kernels"][*own] = profile.at("kernels").at("decode_attention");
    }
    profile[pointer_of(path)] = value;
  }
  return profile;
}

std::string hardware_term_assignment(const std::string& term, double value) {
  return term + "=" + nlohmann::json(value).dump();
}

SplitAssignments split_hardware_assignments(const std::vector<ConfigOverride>& overrides) {
  SplitAssignments out;
  for (const ConfigOverride& o : overrides) {
    const std::string& a = o.assignment;
    const auto eq = a.find('=');
    if (eq != std::string::npos && is_hardware_term(a.substr(0, eq))) {
      out.hardware_terms[a.substr(0, eq)] = std::strtod(a.c_str() + eq + 1, nullptr);
    } else {
      out.others.push_back(o);
    }
  }
  return out;
}

}  // namespace servesim
