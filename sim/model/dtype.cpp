#include "sim/model/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr std::array<std::pair<std::string_view, DType>, 16> kNames{{
    {"fp32", DType::FP32},
    {"float32", DType::FP32},
    {"bf16", DType::BF16},
    {"bfloat16", DType::BF16},
    {"fp16", DType::FP16},
    {"float16", DType::FP16},
    {"half", DType::FP16},
    {"fp8", DType::FP8},
    {"e4m3", DType::FP8},
    {"e5m2", DType::FP8},
    {"fp8_e4m3", DType::FP8},
    {"fp8_e5m2", DType::FP8},
    {"int8", DType::INT8},
    {"int4", DType::INT4},
    {"fp4", DType::FP4},
    {"e2m1", DType::FP4},
}};

}  // namespace

double bytes_per_element(DType dtype) noexcept {
  switch (dtype) {
    case DType::FP32:
      return 4.0;
    case DType::BF16:
    case DType::FP16:
      return 2.0;
    case DType::FP8:
    case DType::INT8:
      return 1.0;
    case DType::INT4:
    case DType::FP4:
      return 0.5;
  }
  return 2.0;
}

std::string_view dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::FP32:
      return "fp32";
    case DType::BF16:
      return "bf16";
    case DType::FP16:
      return "fp16";
    case DType::FP8:
      return "fp8";
    case DType::INT8:
      return "int8";
    case DType::INT4:
      return "int4";
    case DType::FP4:
      return "fp4";
  }
  return "?";
}

DType parse_dtype(std::string_view name, const std::string& where) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& [alias, dtype] : kNames) {
    if (alias == lower) return dtype;
  }
  throw InputError(where, "unknown dtype \"" + std::string(name) +
                              "\" (valid: fp32, bf16, fp16, fp8, int8, int4, fp4)");
}

DType parse_kv_dtype(std::string_view name, const std::string& where) {
  const DType dtype = parse_dtype(name, where);
  if (dtype == DType::FP32 || dtype == DType::FP4) {
    throw InputError(where, "KV cache dtype " + std::string(dtype_name(dtype)) +
                                " is not supported (valid: fp16, bf16, fp8, fp8_e4m3, "
                                "fp8_e5m2, int8, int4)");
  }
  return dtype;
}

}  // namespace servesim
