#include "sim/calibration/serving_fields.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "sim/config/catalog.h"
#include "sim/config/model_catalog.h"
#include "sim/core/json_reader.h"

namespace servesim::serving_fields {
namespace {

namespace fs = std::filesystem;

std::string to_lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// The engine knobs, under "knobs" in a setup and as columns of their own in a file.
constexpr std::array<std::string_view, 11> kKnobColumns{"max_num_seqs",
                                                        "max_num_batched_tokens",
                                                        "max_model_len",
                                                        "gpu_memory_utilization",
                                                        "block_size",
                                                        "enable_prefix_caching",
                                                        "weight_dtype",
                                                        "kv_dtype",
                                                        "cudagraph_mode",
                                                        "batch_wait_timeout_iters",
                                                        "batch_wait_max_tokens_ratio"};

// vLLM's CUDAGraphMode names (vllm/config/compilation.py).
constexpr std::array<std::string_view, 5> kCudagraphModes{"NONE", "PIECEWISE", "FULL",
                                                          "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"};

// Every column a setup may give (at its top level), whatever the kind.
constexpr std::array<std::string_view, 25> kSetupColumns{"model",
                                                         "hardware",
                                                         "tp",
                                                         "pp",
                                                         "engine",
                                                         "workload",
                                                         "stage",
                                                         "rate_per_s",
                                                         "stage_duration_s",
                                                         "groups",
                                                         "users_per_group",
                                                         "system_prompt_tokens",
                                                         "question_tokens",
                                                         "output_tokens_requested",
                                                         "ignore_eos",
                                                         "batch_size",
                                                         "input_tokens",
                                                         "output_tokens",
                                                         "num_requests",
                                                         "prompt_tokens",
                                                         "output_tokens_mean",
                                                         "max_output_tokens",
                                                         "concurrency",
                                                         "num_prompts",
                                                         "random_range_ratio"};

// A setup's JSON value as the text a CSV cell would hold.
std::string cell_text(const nlohmann::json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number()) return value.dump();
  throw InputError(where, "expected a number, a string or a boolean, got " + json_excerpt(value));
}

}  // namespace

std::string in_quotes(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

// --- Values and where they came from -------------------------------------------------------

[[noreturn]] void fail(const Cell& cell, const std::string& expected) {
  throw InputError(cell.where, "expected " + expected + ", got " +
                                   (cell.text.empty() ? "an empty value" : in_quotes(cell.text)));
}

std::int64_t integer_of(const Cell& cell, std::int64_t minimum) {
  std::int64_t value = 0;
  const char* begin = cell.text.data();
  const char* end = begin + cell.text.size();
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || stop != end || value < minimum) {
    fail(cell, "an integer of at least " + std::to_string(minimum));
  }
  return value;
}

double number_of(const Cell& cell, double minimum, bool strictly_above) {
  double value = 0;
  const char* begin = cell.text.data();
  const char* end = begin + cell.text.size();
  const auto [stop, ec] = std::from_chars(begin, end, value);
  const bool in_range = strictly_above ? value > minimum : value >= minimum;
  if (ec != std::errc() || stop != end || !std::isfinite(value) || !in_range) {
    std::string bound = std::to_string(minimum);
    bound.erase(bound.find_last_not_of('0') + 1);
    if (!bound.empty() && bound.back() == '.') bound.pop_back();
    fail(cell, std::string("a number ") + (strictly_above ? "above " : "of at least ") + bound);
  }
  return value;
}

double fraction_of(const Cell& cell) {
  const double value = number_of(cell, 0, true);
  if (value > 1) fail(cell, "a fraction in (0, 1]");
  return value;
}

bool boolean_of(const Cell& cell) {
  const std::string t = to_lower(cell.text);
  if (t == "true" || t == "1") return true;
  if (t == "false" || t == "0") return false;
  fail(cell, "true or false");
}

// --- Setups ------------------------------------------------------------------------------

Setup read_setup(const fs::path& path) {
  Setup setup;
  setup.name = path.string();
  const nlohmann::json document = read_json_file(path);
  if (!document.is_object()) throw InputError(setup.name, "expected a JSON object");
  JsonObjectReader r(document, setup.name);
  r.string("source");
  r.optional_string("description");
  const auto field = [&](const std::string& key) {
    return setup.name + ": field " + in_quotes(key);
  };
  for (const auto column : kSetupColumns) {
    if (const nlohmann::json* value = r.optional_raw(column)) {
      const std::string key(column);
      setup.values[key] = {cell_text(*value, field(key)), field(key)};
    }
  }
  if (const nlohmann::json* knobs = r.optional_raw("knobs")) {
    if (!knobs->is_object()) throw InputError(field("knobs"), "expected an object");
    for (const auto& [key, value] : knobs->items()) {
      if (std::find(kKnobColumns.begin(), kKnobColumns.end(), key) == kKnobColumns.end()) {
        std::string known;
        for (const auto k : kKnobColumns)
          known += (known.empty() ? "" : ", ") + std::string(k);
        throw InputError(field("knobs." + key), "unknown knob (known knobs: " + known + ")");
      }
      setup.values[key] = {cell_text(value, field("knobs." + key)), field("knobs." + key)};
    }
  }
  if (const nlohmann::json* terms = r.optional_raw("engine_terms")) {
    if (!terms->is_object()) throw InputError(field("engine_terms"), "expected an object");
    for (const auto& [key, value] : terms->items()) {
      if (!value.is_number() && !value.is_boolean()) {
        throw InputError(field("engine_terms." + key), "expected a number or a boolean");
      }
      setup.engine_terms.emplace_back(key, value);
    }
  }
  if (const nlohmann::json* translations = r.optional_raw("translate")) {
    if (!translations->is_object()) throw InputError(field("translate"), "expected an object");
    for (const auto& [column, table] : translations->items()) {
      if (!table.is_object()) {
        throw InputError(field("translate." + column),
                         "expected an object from the file's text to a value (null: empty)");
      }
      auto& map = setup.translations[column];
      for (const auto& [text, value] : table.items()) {
        const std::string where = field("translate." + column + "." + text);
        map[text] =
            value.is_null() ? std::nullopt : std::optional<std::string>(cell_text(value, where));
      }
    }
  }
  if (const nlohmann::json* columns = r.optional_raw("columns")) {
    if (!columns->is_object()) throw InputError(field("columns"), "expected an object");
    for (const auto& [format_column, file_column] : columns->items()) {
      if (!file_column.is_string()) {
        throw InputError(field("columns." + format_column), "expected the file's column name");
      }
      setup.renames[format_column] = file_column.get<std::string>();
    }
  }
  r.reject_unknown_keys();
  return setup;
}

// --- Models and hardware -----------------------------------------------------------------

std::string resolve_model(const std::string& name, const fs::path& data_root,
                          const std::string& where) {
  const Catalog catalog(data_root / "models", "model", where);
  // A shipped model's Hugging Face id (its file's _name_or_path).
  if (const auto file = catalog.find_by_hf_id(name)) return file->stem().string();
  // Another checkpoint of a shipped model's architecture: its id, which runs load with the
  // checkpoint's quantization.
  if (const auto checkpoint = find_checkpoint(name)) return std::string(checkpoint->hf_id);
  // A shipped name (case-insensitively) or a path to a model file; anything else is refused
  // with the known names.
  const bool path_like = name.find('/') != std::string::npos ||
                         (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0);
  std::error_code exists_ec;
  if (path_like && !fs::is_regular_file(name, exists_ec)) {
    std::string known;
    for (const auto& shipped : catalog.names())
      known += (known.empty() ? "" : ", ") + shipped;
    throw InputError(where, "unknown model " + in_quotes(name) +
                                ": not a known Hugging Face id nor a model file (shipped models: " +
                                known + ")");
  }
  const fs::path path = catalog.resolve(name);
  std::error_code ec;
  if (fs::equivalent(path.parent_path(), catalog.directory(), ec)) return path.stem().string();
  return path.string();
}

std::string resolve_hardware(const std::string& name, const fs::path& data_root,
                             const std::string& where) {
  const Catalog catalog(data_root / "hw_profiles", "hardware profile", where);
  const fs::path path = catalog.resolve(name);
  std::error_code ec;
  if (fs::equivalent(path.parent_path(), catalog.directory(), ec)) return path.stem().string();
  return path.string();
}

// --- Rows ---------------------------------------------------------------------------------

EngineKnobs read_knobs(const Row& row) {
  EngineKnobs k;
  // "=concurrency": the row's concurrency (a recipe that sets the limit to the load).
  const auto integer = [&](std::string_view column) -> std::optional<std::int64_t> {
    auto cell = row.find(column);
    if (!cell) return std::nullopt;
    if (cell->text == "=concurrency") {
      const auto concurrency = row.find("concurrency");
      if (!concurrency) fail(*cell, "an integer (=concurrency needs a concurrency column)");
      return integer_of(*concurrency, 1);
    }
    return integer_of(*cell, 1);
  };
  k.max_num_seqs = integer("max_num_seqs");
  k.max_num_batched_tokens = integer("max_num_batched_tokens");
  k.max_model_len = integer("max_model_len");
  k.block_size = integer("block_size");
  if (auto cell = row.find("gpu_memory_utilization")) k.gpu_memory_utilization = fraction_of(*cell);
  if (auto cell = row.find("enable_prefix_caching")) k.enable_prefix_caching = boolean_of(*cell);
  if (auto cell = row.find("weight_dtype")) k.weight_dtype = cell->text;
  if (auto cell = row.find("kv_dtype")) k.kv_dtype = cell->text;
  if (auto cell = row.find("cudagraph_mode")) {
    if (std::find(kCudagraphModes.begin(), kCudagraphModes.end(), cell->text) ==
        kCudagraphModes.end()) {
      fail(*cell, "a cudagraph_mode (NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE)");
    }
    k.cudagraph_mode = cell->text;
  }
  if (auto cell = row.find("batch_wait_timeout_iters")) {
    k.batch_wait_timeout_iters = integer_of(*cell, 0);
  }
  if (auto cell = row.find("batch_wait_max_tokens_ratio")) {
    const double ratio = number_of(*cell, 0, false);
    if (ratio >= 1) fail(*cell, "a fraction in [0, 1)");
    k.batch_wait_max_tokens_ratio = ratio;
  }
  return k;
}

}  // namespace servesim::serving_fields
