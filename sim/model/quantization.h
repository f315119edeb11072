#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/dtype.h"

namespace servesim {

// The quantization methods a checkpoint's quantization_config may name.
enum class QuantMethod { Awq, Gptq, Fp8, Mxfp4, Nvfp4 };
std::string_view quant_method_name(QuantMethod method) noexcept;

// How a quantized checkpoint stores its layer matrices: the element format, and the scales
// (and zero points) shared by groups of `group_size` consecutive elements. A group size of 0
// means one scale per tensor or per output channel, whose bytes are negligible and not
// counted.
struct WeightQuantization {
  QuantMethod method = QuantMethod::Awq;
  std::string method_name;  // quant_method as the file spells it ("awq", "modelopt", ...)
  DType dtype = DType::INT4;
  std::int64_t group_size = 0;
  double scale_bytes = 0;  // per group: fp16 scales 2, fp32 4, e8m0 (MXFP4) / e4m3 (NVFP4) 1
  double zero_bytes = 0;   // per group: a packed 4-bit zero point 0.5 (AWQ, GPTQ)
  // modules_to_not_convert names the attention layers (gpt-oss: only experts quantized).
  bool attention_unquantized = false;

  // Bytes per quantized matrix element, scales and zero points included.
  double bytes_per_parameter() const noexcept {
    const double per_group =
        group_size > 0 ? (scale_bytes + zero_bytes) / static_cast<double>(group_size) : 0.0;
    return bytes_per_element(dtype) + per_group;
  }
  std::string description() const;
};

// Reads a quantization_config object. `where` names the file; errors name the field
// (quantization_config.quant_method, .bits, .group_size, ...) and throw InputError (exit 3);
// an unknown method lists the ones servesim prices.
WeightQuantization parse_quantization_config(const nlohmann::json& config,
                                             const std::string& where);

}  // namespace servesim
