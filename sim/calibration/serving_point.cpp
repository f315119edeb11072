#include "sim/calibration/serving_point.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/config/catalog.h"
#include "sim/config/json_reader.h"
#include "sim/core/error.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

std::string to_lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

std::string in_quotes(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

// --- The columns of the format (docs/validation.md) ---------------------------------------

enum class Kind { Load, Static, Burst };

constexpr std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::Load:
      return "serving-under-load";
    case Kind::Static:
      return "static-batch";
    case Kind::Burst:
      return "burst";
  }
  return "?";
}

// The engine knobs, under "knobs" in a setup and as columns of their own in a file.
constexpr std::array<std::string_view, 8> kKnobColumns{
    "max_num_seqs", "max_num_batched_tokens", "max_model_len", "gpu_memory_utilization",
    "block_size",   "enable_prefix_caching",  "weight_dtype",  "kv_dtype"};

// Every column a setup may give (at its top level), whatever the kind.
constexpr std::array<std::string_view, 22> kSetupColumns{"model",
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
                                                         "max_output_tokens"};

// The measured column that tells a file's kind, and the columns each kind requires.
struct KindColumns {
  Kind kind;
  std::string_view marker;
  std::vector<std::string_view> required;
};

const std::vector<KindColumns>& kind_columns() {
  static const std::vector<KindColumns> kinds{
      {Kind::Load,
       "ttft_ms_mean",
       {"model", "hardware", "tp", "workload", "stage", "rate_per_s", "stage_duration_s", "groups",
        "users_per_group", "system_prompt_tokens", "prompt_tokens_mean", "output_tokens_mean",
        "requests_sent", "requests_completed", "ttft_ms_mean", "e2e_ms_mean"}},
      {Kind::Static,
       "output_tokens_per_s_per_gpu",
       {"model", "hardware", "tp", "batch_size", "input_tokens", "output_tokens",
        "output_tokens_per_s_per_gpu"}},
      {Kind::Burst,
       "total_tokens_per_s",
       {"model", "hardware", "tp", "num_requests", "prompt_tokens", "output_tokens_mean",
        "max_output_tokens", "total_tokens_per_s"}},
  };
  return kinds;
}

// --- Values and where they came from -------------------------------------------------------

// One value of a row, as text, with the place to name when it is wrong.
struct Cell {
  std::string text;
  std::string where;  // "FILE: row 3 (line 4), column \"tp\"" or "SETUP: field \"knobs.tp\""
};

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

// A setup's JSON value as the text a CSV cell would hold.
std::string cell_text(const nlohmann::json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number()) return value.dump();
  throw InputError(where, "expected a number, a string or a boolean, got " + value.dump());
}

// --- Setups ------------------------------------------------------------------------------

struct Setup {
  std::string name;                            // the file, for messages
  std::map<std::string, Cell> values;          // column -> value
  std::map<std::string, std::string> renames;  // format column -> the file's column
  std::vector<std::pair<std::string, nlohmann::json>> engine_terms;
};

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

struct ResolvedModel {
  std::string model;  // for the run configuration
  std::string skip_reason;
};

ResolvedModel resolve_model(const std::string& name, const fs::path& data_root,
                            const std::string& where) {
  const Catalog catalog(data_root / "models", "model", where);
  // A shipped model's Hugging Face id (its file's _name_or_path).
  if (const auto file = catalog.find_by_hf_id(name)) return {file->stem().string(), {}};
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
  if (fs::equivalent(path.parent_path(), catalog.directory(), ec))
    return {path.stem().string(), {}};
  return {path.string(), {}};
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

// The values of one data row: the file's cells over the setup's, and the command line's
// overrides (--hw, --engine) over both.
class Row {
 public:
  Row(const std::map<std::string, std::size_t>& columns, const CsvCursor* csv, std::size_t row,
      const Setup* setup, std::string source)
      : columns_(columns), csv_(csv), row_(row), setup_(setup), source_(std::move(source)) {}

  std::optional<Cell> find(std::string_view column) const {
    const auto it = columns_.find(std::string(column));
    if (it != columns_.end() && csv_ != nullptr) {
      const std::string_view text = csv_->fields()[it->second];
      if (!text.empty()) {
        return Cell{std::string(text), source_ + ": row " + std::to_string(row_) + " (line " +
                                           std::to_string(csv_->line_number()) + "), column " +
                                           in_quotes(column)};
      }
    }
    if (setup_ != nullptr) {
      const auto s = setup_->values.find(std::string(column));
      if (s != setup_->values.end()) return s->second;
    }
    return std::nullopt;
  }
  Cell get(std::string_view column) const {
    if (auto cell = find(column)) return *cell;
    throw InputError(source_ + ": row " + std::to_string(row_) + " (line " +
                         std::to_string(csv_ != nullptr ? csv_->line_number() : 0) + "), column " +
                         in_quotes(column),
                     "empty, and the setup does not give it");
  }
  std::int64_t integer(std::string_view column, std::int64_t minimum) const {
    return integer_of(get(column), minimum);
  }
  double number(std::string_view column, double minimum, bool strictly_above) const {
    return number_of(get(column), minimum, strictly_above);
  }

 private:
  const std::map<std::string, std::size_t>& columns_;
  const CsvCursor* csv_;
  std::size_t row_;
  const Setup* setup_;
  std::string source_;
};

EngineKnobs read_knobs(const Row& row) {
  EngineKnobs k;
  const auto integer = [&](std::string_view column) -> std::optional<std::int64_t> {
    if (auto cell = row.find(column)) return integer_of(*cell, 1);
    return std::nullopt;
  };
  k.max_num_seqs = integer("max_num_seqs");
  k.max_num_batched_tokens = integer("max_num_batched_tokens");
  k.max_model_len = integer("max_model_len");
  k.block_size = integer("block_size");
  if (auto cell = row.find("gpu_memory_utilization")) k.gpu_memory_utilization = fraction_of(*cell);
  if (auto cell = row.find("enable_prefix_caching")) k.enable_prefix_caching = boolean_of(*cell);
  if (auto cell = row.find("weight_dtype")) k.weight_dtype = cell->text;
  if (auto cell = row.find("kv_dtype")) k.kv_dtype = cell->text;
  return k;
}

// The deployment columns every kind shares, resolved.
void read_deployment(const Row& row, const ServingPointOptions& options, ServingPoint& p) {
  const Cell model = row.get("model");
  p.model_name = model.text;
  const ResolvedModel resolved = resolve_model(model.text, options.data_root, model.where);
  p.model = resolved.model;
  p.skip_reason = resolved.skip_reason;
  if (options.hardware) {
    p.hardware = resolve_hardware(*options.hardware, options.data_root, "--hw");
  } else {
    const Cell hardware = row.get("hardware");
    p.hardware = resolve_hardware(hardware.text, options.data_root, hardware.where);
  }
  p.tp = row.integer("tp", 1);
  if (row.find("pp")) p.pp = row.integer("pp", 1);
  if (options.engine) {
    p.engine = *options.engine;
  } else if (auto engine = row.find("engine")) {
    p.engine = engine->text;
  }
  p.knobs = read_knobs(row);
}

LoadStage read_load_stage(const Row& row, ServingMetrics& measured) {
  LoadStage s;
  s.workload = row.get("workload").text;
  s.stage = row.integer("stage", 0);
  s.rate_per_s = row.number("rate_per_s", 0, true);
  s.duration_s = row.number("stage_duration_s", 0, true);
  s.groups = row.integer("groups", 1);
  s.users_per_group = row.integer("users_per_group", 1);
  s.system_prompt_tokens = row.integer("system_prompt_tokens", 0);
  if (row.find("question_tokens")) s.question_tokens = row.integer("question_tokens", 0);
  if (row.find("output_tokens_requested")) {
    s.output_tokens_requested = row.integer("output_tokens_requested", 1);
  }
  const Cell prompt = row.get("prompt_tokens_mean");
  s.prompt_tokens_mean = number_of(prompt, 1, false);
  if (std::llround(s.prompt_tokens_mean) <= s.system_prompt_tokens) {
    fail(prompt, "a mean prompt longer than system_prompt_tokens (" +
                     std::to_string(s.system_prompt_tokens) + ")");
  }
  s.output_tokens_mean = row.number("output_tokens_mean", 1, false);
  if (auto cell = row.find("ignore_eos")) {
    s.ignore_eos = boolean_of(*cell);
    if (s.ignore_eos && !s.output_tokens_requested) {
      throw InputError(cell->where,
                       "true needs output_tokens_requested (under ignore_eos every request "
                       "generates that many tokens), and neither the file nor the setup gives it");
    }
  }
  s.requests_sent = row.integer("requests_sent", 1);
  const Cell completed = row.get("requests_completed");
  s.requests_completed = integer_of(completed, 0);
  if (s.requests_completed > s.requests_sent) {
    fail(completed, "at most requests_sent (" + std::to_string(s.requests_sent) + ")");
  }
  measured[ServingMetric::TtftMs] = row.number("ttft_ms_mean", 0, true);
  measured[ServingMetric::E2eMs] = row.number("e2e_ms_mean", 0, true);
  if (row.find("itl_ms_mean")) {
    measured[ServingMetric::ItlMs] = row.number("itl_ms_mean", 0, true);
  } else if (s.output_tokens_mean > 1) {
    // As the data README computes it.
    measured[ServingMetric::ItlMs] =
        (*measured[ServingMetric::E2eMs] - *measured[ServingMetric::TtftMs]) /
        (s.output_tokens_mean - 1);
  }
  if (row.find("output_tokens_per_s")) {
    measured[ServingMetric::OutputTokensPerS] = row.number("output_tokens_per_s", 0, true);
  }
  measured[ServingMetric::CompletedShare] =
      static_cast<double>(s.requests_completed) / static_cast<double>(s.requests_sent);
  measured.overloaded = static_cast<double>(s.requests_completed) <
                            kOverloadedCompletedShare * static_cast<double>(s.requests_sent) ||
                        *measured[ServingMetric::TtftMs] > 1000 * kOverloadedTtftS;
  return s;
}

StaticBatch read_static_batch(const Row& row, ServingMetrics& measured) {
  StaticBatch b;
  b.batch_size = row.integer("batch_size", 1);
  b.input_tokens = row.integer("input_tokens", 1);
  b.output_tokens = row.integer("output_tokens", 1);
  measured[ServingMetric::OutputTokensPerSPerGpu] =
      row.number("output_tokens_per_s_per_gpu", 0, true);
  return b;
}

BurstRequests read_burst(const Row& row, ServingMetrics& measured) {
  BurstRequests b;
  b.num_requests = row.integer("num_requests", 1);
  b.prompt_tokens = row.integer("prompt_tokens", 1);
  b.output_tokens_mean = row.number("output_tokens_mean", 0, true);
  b.max_output_tokens = row.integer("max_output_tokens", 1);
  measured[ServingMetric::TotalTokensPerS] = row.number("total_tokens_per_s", 0, true);
  return b;
}

std::vector<ServingPoint> read_csv_points(const fs::path& file, const ServingPointOptions& options,
                                          const Setup* setup) {
  const std::string source = file.string();
  const std::string text = read_text_file(file);
  CsvCursor csv(text, source);
  if (!csv.next_line()) throw InputError(source, "empty file (no header, no rows)");
  const std::string header_where =
      source + ": line " + std::to_string(csv.line_number()) + " (header)";
  std::map<std::string, std::size_t> columns;
  for (std::size_t i = 0; i < csv.fields().size(); ++i) {
    const std::string name(csv.fields()[i]);
    if (name.empty())
      throw InputError(header_where, "column " + std::to_string(i + 1) + " has no name");
    if (!columns.emplace(name, i).second) {
      throw InputError(header_where, "column " + in_quotes(name) + " appears twice");
    }
  }
  const std::size_t field_count = csv.fields().size();
  if (setup != nullptr) {
    for (const auto& [format_column, file_column] : setup->renames) {
      const auto it = columns.find(file_column);
      if (it == columns.end()) {
        throw InputError(setup->name + ": field " + in_quotes("columns." + format_column),
                         "the file " + source + " has no column " + in_quotes(file_column));
      }
      columns[format_column] = it->second;
    }
  }

  const KindColumns* kind = nullptr;
  for (const auto& candidate : kind_columns()) {
    if (columns.count(std::string(candidate.marker)) == 0) continue;
    if (kind != nullptr) {
      throw InputError(header_where, "both " + in_quotes(kind->marker) + " and " +
                                         in_quotes(candidate.marker) +
                                         ": one kind of serving point per file");
    }
    kind = &candidate;
  }
  if (kind == nullptr) {
    throw InputError(header_where,
                     "cannot tell the kind of serving point: expected a measured column "
                     "ttft_ms_mean (serving under load), output_tokens_per_s_per_gpu (static "
                     "batches) or total_tokens_per_s (a burst)");
  }
  for (const auto column : kind->required) {
    const std::string name(column);
    const bool overridden = name == "hardware" && options.hardware;
    if (columns.count(name) == 0 && !overridden &&
        (setup == nullptr || setup->values.count(name) == 0)) {
      throw InputError(header_where + ", column " + in_quotes(name),
                       "missing: " + std::string(kind_name(kind->kind)) + " rows require it, and " +
                           (setup != nullptr ? "the setup " + setup->name + " does not give it"
                                             : "no setup gives it (--setup FILE, or "
                                               "validation/setups/" +
                                                   file.stem().string() + ".json)"));
    }
  }

  std::vector<ServingPoint> points;
  std::size_t row_number = 0;
  while (csv.next_line()) {
    ++row_number;
    csv.expect_fields(field_count);
    const Row row(columns, &csv, row_number, setup, source);
    ServingPoint p;
    p.source = source;
    p.row = row_number;
    p.line = csv.line_number();
    read_deployment(row, options, p);
    switch (kind->kind) {
      case Kind::Load:
        p.workload = read_load_stage(row, p.measured);
        break;
      case Kind::Static:
        p.workload = read_static_batch(row, p.measured);
        break;
      case Kind::Burst:
        p.workload = read_burst(row, p.measured);
        break;
    }
    points.push_back(std::move(p));
  }
  if (points.empty()) throw InputError(source, "no data rows after the header");
  return points;
}

// --- vLLM's bench serve result files ---------------------------------------------------------

std::vector<BenchReplay::Lengths> replay_lengths(JsonObjectReader& r, std::int64_t num_prompts,
                                                 std::int64_t completed) {
  const nlohmann::json* inputs = r.optional_raw("input_lens");
  const nlohmann::json* outputs = r.optional_raw("output_lens");
  std::vector<BenchReplay::Lengths> lengths;
  if (inputs != nullptr && outputs != nullptr) {
    if (!inputs->is_array() || !outputs->is_array() || inputs->size() != outputs->size() ||
        inputs->empty()) {
      r.fail("input_lens", "expected input_lens and output_lens as arrays of one length each");
    }
    for (std::size_t i = 0; i < inputs->size(); ++i) {
      const auto& in = (*inputs)[i];
      const auto& out = (*outputs)[i];
      if (!in.is_number_integer() || in.get<std::int64_t>() < 1 || !out.is_number_integer() ||
          out.get<std::int64_t>() < 0) {
        r.fail("input_lens",
               "entry " + std::to_string(i) + ": expected token counts (input >= 1, output >= 0)");
      }
      // A failed request (no output) is replayed with one token: it was sent and prefilled.
      lengths.push_back(
          {in.get<std::int64_t>(), std::max<std::int64_t>(1, out.get<std::int64_t>())});
    }
    return lengths;
  }
  // Without --save-detailed, vLLM keeps only totals: every request gets the mean lengths.
  if (completed < 1) r.fail("completed", "no completed request: the mean lengths are unknown");
  const auto mean_of = [&](std::string_view key) {
    const double total = r.positive_number(key);
    return std::max<std::int64_t>(1, std::llround(total / static_cast<double>(completed)));
  };
  const BenchReplay::Lengths mean{mean_of("total_input_tokens"), mean_of("total_output_tokens")};
  lengths.assign(static_cast<std::size_t>(num_prompts), mean);
  return lengths;
}

std::vector<ServingPoint> read_bench_result(const fs::path& file,
                                            const ServingPointOptions& options,
                                            const Setup* setup) {
  const std::string source = file.string();
  const nlohmann::json document = read_json_file(file);
  if (!document.is_object()) throw InputError(source, "expected a JSON object");
  JsonObjectReader r(document, source);
  const std::map<std::string, std::size_t> no_columns;
  const Row defaults(no_columns, nullptr, 0, setup, source);

  ServingPoint p;
  p.source = source;
  // The deployment: model_id from the file, the rest from the setup or the command line.
  const std::string model_id = r.string("model_id");
  p.model_name = model_id;
  const ResolvedModel resolved =
      resolve_model(model_id, options.data_root, source + ": field \"model_id\"");
  p.model = resolved.model;
  p.skip_reason = resolved.skip_reason;
  if (options.hardware) {
    p.hardware = resolve_hardware(*options.hardware, options.data_root, "--hw");
  } else if (auto hardware = defaults.find("hardware")) {
    p.hardware = resolve_hardware(hardware->text, options.data_root, hardware->where);
  } else {
    throw InputError(source,
                     "the hardware is not recorded in a bench serve result: give --hw "
                     "NAME or a setup with \"hardware\"");
  }
  if (defaults.find("tp")) p.tp = defaults.integer("tp", 1);
  if (defaults.find("pp")) p.pp = defaults.integer("pp", 1);
  if (options.engine) {
    p.engine = *options.engine;
  } else if (auto engine = defaults.find("engine")) {
    p.engine = engine->text;
  }
  p.knobs = read_knobs(defaults);

  BenchReplay replay;
  const std::int64_t num_prompts = r.positive_integer("num_prompts");
  const nlohmann::json* rate = r.optional_raw("request_rate");
  if (rate != nullptr && rate->is_string() && rate->get<std::string>() == "inf") {
    replay.request_rate_per_s = std::numeric_limits<double>::infinity();
  } else if (rate != nullptr && rate->is_number() && rate->get<double>() > 0) {
    replay.request_rate_per_s = rate->get<double>();
  } else {
    r.fail("request_rate",
           "expected a positive number or \"inf\" (a trace or closed-loop run records no rate "
           "and cannot be replayed), got " +
               (rate != nullptr ? rate->dump() : std::string("nothing")));
  }
  if (const nlohmann::json* b = r.optional_raw("burstiness"); b != nullptr && !b->is_null()) {
    if (!b->is_number() || !(b->get<double>() > 0)) r.fail("burstiness", "expected a number > 0");
    replay.burstiness = b->get<double>();
  }
  if (const nlohmann::json* c = r.optional_raw("max_concurrency"); c != nullptr && !c->is_null()) {
    if (!c->is_number_integer() || c->get<std::int64_t>() < 1) {
      r.fail("max_concurrency", "expected an integer >= 1 or null");
    }
    if (std::isfinite(replay.request_rate_per_s)) {
      r.fail("max_concurrency",
             "a concurrency limit with a finite request_rate cannot be replayed: servesim's "
             "arrivals are either open (a rate) or a closed loop (a concurrency)");
    }
    replay.max_concurrency = c->get<std::int64_t>();
  }
  const auto completed = r.optional_nonnegative_integer("completed").value_or(num_prompts);
  if (completed > num_prompts) r.fail("completed", "more than num_prompts");
  replay.requests = replay_lengths(r, num_prompts, completed);

  ServingMetrics& m = p.measured;
  const auto metric = [&](std::string_view key, ServingMetric target) {
    if (const nlohmann::json* v = r.optional_raw(key); v != nullptr && !v->is_null()) {
      if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() <= 0) {
        r.fail(key, "expected a number > 0");
      }
      m[target] = v->get<double>();
    }
  };
  metric("mean_ttft_ms", ServingMetric::TtftMs);
  metric("mean_itl_ms", ServingMetric::ItlMs);
  metric("mean_e2el_ms", ServingMetric::E2eMs);
  metric("output_throughput", ServingMetric::OutputTokensPerS);
  m[ServingMetric::CompletedShare] =
      static_cast<double>(completed) / static_cast<double>(replay.requests.size());
  m.overloaded = static_cast<double>(completed) <
                 kOverloadedCompletedShare * static_cast<double>(replay.requests.size());
  p.workload = std::move(replay);
  return {std::move(p)};
}

std::string format_number(double value) {
  if (std::isinf(value)) return "inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

double LoadStage::generated_output_tokens() const {
  if (ignore_eos && output_tokens_requested) return static_cast<double>(*output_tokens_requested);
  return output_tokens_mean;
}

double LoadStage::counted_per_generated_token() const {
  if (!ignore_eos || !output_tokens_requested) return 1.0;
  return output_tokens_mean / static_cast<double>(*output_tokens_requested);
}

std::string ServingPoint::workload_label() const {
  struct Label {
    std::string operator()(const LoadStage& s) const { return s.workload; }
    std::string operator()(const StaticBatch& b) const {
      return "batch " + std::to_string(b.batch_size) + " x " + std::to_string(b.input_tokens) +
             "/" + std::to_string(b.output_tokens);
    }
    std::string operator()(const BurstRequests& b) const {
      return "burst " + std::to_string(b.num_requests) + " x " + std::to_string(b.prompt_tokens) +
             "/exp(" + format_number(b.output_tokens_mean) +
             ")<=" + std::to_string(b.max_output_tokens);
    }
    std::string operator()(const BenchReplay& r) const {
      return "replay " + std::to_string(r.requests.size());
    }
  };
  return std::visit(Label{}, workload);
}

std::string ServingPoint::where() const {
  return row == 0 ? source : source + " row " + std::to_string(row);
}

std::optional<double> ServingPoint::rate_per_s() const {
  if (const auto* s = std::get_if<LoadStage>(&workload)) return s->rate_per_s;
  if (const auto* r = std::get_if<BenchReplay>(&workload)) return r->request_rate_per_s;
  if (std::holds_alternative<BurstRequests>(workload) ||
      std::holds_alternative<StaticBatch>(workload)) {
    return std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

std::optional<fs::path> setup_file_for(const fs::path& file, const ServingPointOptions& options) {
  if (options.setup) return options.setup;
  const fs::path shipped =
      options.data_root / "validation" / "setups" / (file.stem().string() + ".json");
  std::error_code ec;
  if (fs::is_regular_file(shipped, ec)) return shipped;
  return std::nullopt;
}

std::vector<ServingPoint> read_serving_points(const fs::path& file,
                                              const ServingPointOptions& options) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw InputError(file.string(), "file not found");
  std::optional<Setup> setup;
  if (const auto path = setup_file_for(file, options)) setup = read_setup(*path);
  const Setup* s = setup ? &*setup : nullptr;
  const auto with_terms = [&](std::vector<ServingPoint> points) {
    if (s != nullptr) {
      for (ServingPoint& p : points)
        p.engine_terms = s->engine_terms;
    }
    return points;
  };
  if (file.extension() == ".json") return with_terms(read_bench_result(file, options, s));
  if (file.extension() == ".csv") return with_terms(read_csv_points(file, options, s));
  throw InputError(file.string(),
                   "expected a .csv file of measured serving points or a .json result of vllm "
                   "bench serve --save-result");
}

std::vector<ServingRun> group_serving_runs(std::vector<ServingPoint> points) {
  std::vector<ServingRun> runs;
  // Load stages of one model, hardware, TP and workload, by stage number.
  std::map<std::tuple<std::string, std::string, std::int64_t, std::string>,
           std::vector<ServingPoint>>
      stages;
  std::vector<
      std::pair<std::size_t, std::tuple<std::string, std::string, std::int64_t, std::string>>>
      order;  // first row of each group, to keep the file's order
  std::vector<std::pair<std::size_t, ServingRun>> singles;
  for (ServingPoint& p : points) {
    if (const auto* s = std::get_if<LoadStage>(&p.workload)) {
      auto key = std::make_tuple(p.model_name, p.hardware, p.tp, s->workload);
      auto& group = stages[key];
      if (group.empty()) order.emplace_back(p.row, key);
      group.push_back(std::move(p));
    } else {
      const std::size_t row = p.row;
      singles.emplace_back(row, ServingRun{{std::move(p)}});
    }
  }
  std::vector<std::pair<std::size_t, ServingRun>> ordered = std::move(singles);
  // A run is placed at its earliest row.
  const auto earliest_row = [](const ServingRun& run) {
    std::size_t row = run.points.front().row;
    for (const ServingPoint& q : run.points)
      row = std::min(row, q.row);
    return row;
  };
  for (const auto& entry : order) {
    const auto& key = entry.second;
    auto& group = stages[key];
    std::stable_sort(group.begin(), group.end(), [](const ServingPoint& a, const ServingPoint& b) {
      return std::get<LoadStage>(a.workload).stage < std::get<LoadStage>(b.workload).stage;
    });
    ServingRun run;
    for (ServingPoint& p : group) {
      const auto& s = std::get<LoadStage>(p.workload);
      if (!run.points.empty()) {
        const ServingPoint& before = run.points.back();
        const auto& b = std::get<LoadStage>(before.workload);
        if (b.stage == s.stage) {
          throw InputError(p.where(), "stage " + std::to_string(s.stage) + " of workload " +
                                          in_quotes(s.workload) + " appears twice (also " +
                                          before.where() + ")");
        }
        if (b.stage + 1 != s.stage) {
          // Not back to back: a run of its own, from an empty server.
          ordered.emplace_back(earliest_row(run), std::move(run));
          run = ServingRun{};
        } else if (before.pp != p.pp || before.engine != p.engine || !(before.knobs == p.knobs) ||
                   b.groups != s.groups || b.users_per_group != s.users_per_group ||
                   b.system_prompt_tokens != s.system_prompt_tokens ||
                   b.ignore_eos != s.ignore_eos ||
                   (s.ignore_eos && b.output_tokens_requested != s.output_tokens_requested)) {
          throw InputError(p.where(), "stage " + std::to_string(s.stage) + " of workload " +
                                          in_quotes(s.workload) + " runs back to back with " +
                                          before.where() +
                                          " but differs from it in pp, engine, knobs, groups, "
                                          "users_per_group, system_prompt_tokens or, under "
                                          "ignore_eos, output_tokens_requested");
        }
      }
      run.points.push_back(std::move(p));
    }
    ordered.emplace_back(earliest_row(run), std::move(run));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [row, run] : ordered)
    runs.push_back(std::move(run));
  return runs;
}

}  // namespace servesim
