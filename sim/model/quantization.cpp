#include "sim/model/quantization.h"

#include <sstream>

#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr std::string_view kKnownMethods =
    "awq, gptq, fp8, fbgemm_fp8, mxfp4, nvfp4, modelopt (quant_algo FP8 or NVFP4)";

[[noreturn]] void fail(const std::string& where, const std::string& field,
                       const std::string& message) {
  throw InputError(where, "field \"quantization_config." + field + "\": " + message);
}

std::int64_t integer_field(const nlohmann::json& config, const std::string& where,
                           const char* field, std::int64_t fallback) {
  const auto it = config.find(field);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) fail(where, field, "expected an integer");
  return it->get<std::int64_t>();
}

std::string string_field(const nlohmann::json& config, const char* field) {
  const auto it = config.find(field);
  return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// AWQ and GPTQ: `bits`-wide integers with an fp16 scale and a packed zero point per group of
// group_size input elements (-1: one per output channel).
WeightQuantization integer_groups(const nlohmann::json& config, const std::string& where,
                                  QuantMethod method) {
  WeightQuantization q;
  q.method = method;
  const std::int64_t bits = integer_field(config, where, "bits", 4);
  if (bits == 4) {
    q.dtype = DType::INT4;
  } else if (bits == 8 && method == QuantMethod::Gptq) {
    q.dtype = DType::INT8;
  } else {
    fail(where, "bits",
         "expected 4" + std::string(method == QuantMethod::Gptq ? " or 8" : "") + ", got " +
             std::to_string(bits));
  }
  const std::int64_t group = integer_field(config, where, "group_size", 128);
  if (group == 0 || group < -1) {
    fail(where, "group_size", "expected a positive group size or -1, got " + std::to_string(group));
  }
  q.group_size = group > 0 ? group : 0;
  q.scale_bytes = 2;
  q.zero_bytes = static_cast<double>(bits) / 8;
  return q;
}

// fp8: per tensor, or block-wise with one fp32 scale per weight_block_size block.
WeightQuantization fp8(const nlohmann::json& config, const std::string& where) {
  WeightQuantization q;
  q.method = QuantMethod::Fp8;
  q.dtype = DType::FP8;
  const auto it = config.find("weight_block_size");
  if (it != config.end() && !it->is_null()) {
    if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number_integer() ||
        !(*it)[1].is_number_integer() || (*it)[0].get<std::int64_t>() <= 0 ||
        (*it)[1].get<std::int64_t>() <= 0) {
      fail(where, "weight_block_size", "expected two positive integers [rows, columns]");
    }
    q.group_size = (*it)[0].get<std::int64_t>() * (*it)[1].get<std::int64_t>();
    q.scale_bytes = 4;
  }
  return q;
}

bool names_attention(const nlohmann::json& config) {
  const auto it = config.find("modules_to_not_convert");
  if (it == config.end() || !it->is_array()) return false;
  for (const auto& module : *it) {
    if (module.is_string() && module.get<std::string>().find("attn") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// 4-bit floats in blocks: MXFP4 one e8m0 scale per 32 elements, NVFP4 one e4m3 per 16.
WeightQuantization fp4_blocks(QuantMethod method, const nlohmann::json& config) {
  WeightQuantization q;
  q.method = method;
  q.dtype = DType::FP4;
  q.group_size = method == QuantMethod::Mxfp4 ? 32 : 16;
  q.scale_bytes = 1;
  q.attention_unquantized = names_attention(config);
  return q;
}

}  // namespace

std::string_view quant_method_name(QuantMethod method) noexcept {
  switch (method) {
    case QuantMethod::Awq:
      return "awq";
    case QuantMethod::Gptq:
      return "gptq";
    case QuantMethod::Fp8:
      return "fp8";
    case QuantMethod::Mxfp4:
      return "mxfp4";
    case QuantMethod::Nvfp4:
      return "nvfp4";
  }
  return "?";
}

std::string WeightQuantization::description() const {
  std::ostringstream out;
  out << quant_method_name(method) << " (" << dtype_name(dtype);
  if (group_size > 0) out << ", groups of " << group_size;
  if (attention_unquantized) out << ", attention in 16 bits";
  out << ", " << bytes_per_parameter() << " B per matrix element)";
  return out.str();
}

WeightQuantization parse_quantization_config(const nlohmann::json& config,
                                             const std::string& where) {
  if (!config.is_object()) {
    throw InputError(where, "field \"quantization_config\": expected an object");
  }
  const auto method_it = config.find("quant_method");
  if (method_it == config.end() || !method_it->is_string()) {
    fail(where, "quant_method",
         "required but missing (servesim prices " + std::string(kKnownMethods) + ")");
  }
  const std::string name = method_it->get<std::string>();
  WeightQuantization q;
  if (name == "awq" || name == "awq_marlin") {
    q = integer_groups(config, where, QuantMethod::Awq);
  } else if (name == "gptq" || name == "gptq_marlin") {
    q = integer_groups(config, where, QuantMethod::Gptq);
  } else if (name == "fp8" || name == "fbgemm_fp8") {
    q = fp8(config, where);
  } else if (name == "mxfp4") {
    q = fp4_blocks(QuantMethod::Mxfp4, config);
  } else if (name == "nvfp4") {
    q = fp4_blocks(QuantMethod::Nvfp4, config);
  } else if (name == "modelopt") {
    const std::string algo = string_field(config, "quant_algo");
    if (algo == "NVFP4") {
      q = fp4_blocks(QuantMethod::Nvfp4, config);
    } else if (algo == "FP8") {
      q = fp8(config, where);
    } else {
      fail(where, "quant_algo",
           "modelopt algorithm \"" + algo + "\" is not priced (known: FP8, NVFP4)");
    }
  } else {
    fail(
        where, "quant_method",
        "unknown quantization method \"" + name + "\" (known: " + std::string(kKnownMethods) + ")");
  }
  q.method_name = name;
  return q;
}

}  // namespace servesim
