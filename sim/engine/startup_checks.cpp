#include "sim/engine/startup_checks.h"

#include "sim/core/json_reader.h"

namespace servesim {
namespace {

constexpr const char* kMaxLenNames[] = {"allow", "refuse", "clip"};

}  // namespace

StartupChecks read_startup_checks(const nlohmann::json& object, const std::string& source_name,
                                  const std::string& key_prefix) {
  JsonObjectReader r(object, source_name, key_prefix);
  StartupChecks c;
  if (const auto text = r.optional_string("max_len_beyond_kv_cache")) {
    bool known = false;
    for (int i = 0; i < 3; ++i) {
      if (*text == kMaxLenNames[i]) {
        c.max_len_beyond_kv = static_cast<MaxLenBeyondKv>(i);
        known = true;
      }
    }
    if (!known) {
      r.fail("max_len_beyond_kv_cache",
             "expected \"refuse\" (vLLM), \"clip\" (SGLang, TensorRT-LLM) or \"allow\"");
    }
  }
  c.clip_margin_tokens = r.optional_nonnegative_integer("clip_margin_tokens").value_or(0);
  c.batched_tokens_cover_max_num_seqs =
      r.optional_boolean("max_num_batched_tokens_covers_max_num_seqs").value_or(false);
  if (const nlohmann::json* sizes = r.optional_raw("block_sizes")) {
    if (!sizes->is_array()) r.fail("block_sizes", "expected a list of tokens per block");
    for (const auto& size : *sizes) {
      if (!size.is_number_integer() || size.get<std::int64_t>() < 1) {
        r.fail("block_sizes", "expected positive whole numbers of tokens");
      }
      c.block_sizes.push_back(size.get<std::int64_t>());
    }
  }
  c.block_size_power_of_two = r.optional_boolean("block_size_power_of_two").value_or(false);
  r.reject_unknown_keys();
  return c;
}

nlohmann::json startup_checks_to_json(const StartupChecks& c) {
  return {{"max_len_beyond_kv_cache", kMaxLenNames[static_cast<int>(c.max_len_beyond_kv)]},
          {"clip_margin_tokens", c.clip_margin_tokens},
          {"max_num_batched_tokens_covers_max_num_seqs", c.batched_tokens_cover_max_num_seqs},
          {"block_sizes", c.block_sizes},
          {"block_size_power_of_two", c.block_size_power_of_two}};
}

}  // namespace servesim
