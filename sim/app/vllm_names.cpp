#include "sim/app/vllm_names.h"

#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/suggest.h"

namespace servesim {
namespace {

using Names = std::vector<std::pair<std::string_view, std::string_view>>;

std::string translate(const Names& names, const std::string& value, const std::string& flag) {
  std::vector<std::string> accepted;
  for (const auto& [vllm, servesim] : names) {
    if (vllm == value) return std::string(servesim);
    accepted.emplace_back(vllm);
  }
  std::string list;
  for (const auto& name : accepted)
    list += (list.empty() ? "" : ", ") + name;
  const std::string hint = did_you_mean(value, accepted);
  throw InputError(flag, "\"" + value + "\" has no servesim equivalent (expected one of " + list +
                             ")" + (hint.empty() ? "" : "; " + hint));
}

}  // namespace

std::string kv_dtype_for_vllm(const std::string& value) {
  static const Names kNames{{"auto", "auto"}, {"float16", "fp16"}, {"bfloat16", "bf16"},
                            {"fp8", "fp8"},   {"fp8_e4m3", "fp8"}, {"fp8_e5m2", "fp8"}};
  return translate(kNames, value, "--kv-cache-dtype");
}

std::string weight_dtype_for_vllm_quantization(const std::string& value) {
  static const Names kNames{{"fp8", "fp8"},         {"fbgemm_fp8", "fp8"}, {"awq", "int4"},
                            {"awq_marlin", "int4"}, {"gptq", "int4"},      {"gptq_marlin", "int4"}};
  return translate(kNames, value, "--quantization");
}

}  // namespace servesim
