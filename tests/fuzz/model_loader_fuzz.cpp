#include <cmath>
#include <stdexcept>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/model/model_loader.h"
#include "sim/model/model_size.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

// A Hugging Face config.json as --model PATH reads it, then the sizes every command derives.
bool load_model_text(std::string_view text) {
  const std::string source = "fuzz-model/config.json";
  try {
    const ModelSpec model = model_from_hf_config(parse_json_text(text, source), source, "fuzz");
    const ParameterCounts counts = count_parameters(model);
    if (counts.total <= 0 || counts.active <= 0 || counts.active > counts.total) {
      throw std::logic_error("model accepted with a non-positive parameter count");
    }
    for (const DType dtype : {DType::FP32, DType::FP16, DType::FP8, DType::INT4}) {
      const double weights = weight_bytes(model, dtype);
      const double kv = kv_bytes_per_token(model, dtype);
      if (!std::isfinite(weights) || weights <= 0 || !std::isfinite(kv) || kv <= 0) {
        throw std::logic_error("model accepted with non-finite or non-positive sizes");
      }
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_model_text)
