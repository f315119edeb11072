#include "sim/calibration/serving_csv.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using namespace serving_fields;

// --- The columns of the format (docs/validation.md) ---------------------------------------

enum class Kind { Load, Static, Burst, ClosedLoop };

constexpr std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::Load:
      return "serving-under-load";
    case Kind::Static:
      return "static-batch";
    case Kind::Burst:
      return "burst";
    case Kind::ClosedLoop:
      return "closed-loop";
  }
  return "?";
}

// The column that tells a file's kind (unless `unless` is there too), and the columns each
// kind requires.
struct KindColumns {
  Kind kind;
  std::string_view marker;
  std::vector<std::string_view> required;
  std::string_view unless;
};

// The measured figures of a closed loop: at least one of them.
constexpr std::array<std::pair<std::string_view, ServingMetric>, 5> kClosedLoopMetrics{{
    {"ttft_ms_mean", ServingMetric::TtftMs},
    {"tpot_ms_mean", ServingMetric::TpotMs},
    {"itl_ms_mean", ServingMetric::ItlMs},
    {"e2e_ms_mean", ServingMetric::E2eMs},
    {"output_tokens_per_s", ServingMetric::OutputTokensPerS},
}};

const std::vector<KindColumns>& kind_columns() {
  static const std::vector<KindColumns> kinds{
      {Kind::Load,
       "ttft_ms_mean",
       {"model", "hardware", "tp", "workload", "stage", "rate_per_s", "stage_duration_s", "groups",
        "users_per_group", "system_prompt_tokens", "prompt_tokens_mean", "output_tokens_mean",
        "requests_sent", "requests_completed", "ttft_ms_mean", "e2e_ms_mean"},
       "concurrency"},
      {Kind::Static,
       "output_tokens_per_s_per_gpu",
       {"model", "hardware", "tp", "batch_size", "input_tokens", "output_tokens",
        "output_tokens_per_s_per_gpu"},
       ""},
      {Kind::Burst,
       "total_tokens_per_s",
       {"model", "hardware", "tp", "num_requests", "prompt_tokens", "output_tokens_mean",
        "max_output_tokens", "total_tokens_per_s"},
       ""},
      {Kind::ClosedLoop,
       "concurrency",
       {"model", "hardware", "tp", "concurrency", "num_prompts", "input_tokens", "output_tokens"},
       ""},
  };
  return kinds;
}

// The deployment columns every kind shares, resolved.
void read_deployment(const Row& row, const ServingPointOptions& options, ServingPoint& p) {
  const Cell model = row.get("model");
  p.model_name = model.text;
  p.model = resolve_model(model.text, options.data_root, model.where);
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

// A closed loop's mean TTFT above kOverloadedTtftS is reported apart, as a load stage's: the
// requests queued for KV memory or seats, and their latencies describe the queue.
ClosedLoopRequests read_closed_loop(const Row& row, ServingMetrics& measured) {
  ClosedLoopRequests c;
  c.concurrency = row.integer("concurrency", 1);
  c.num_prompts = row.integer("num_prompts", 1);
  c.input_tokens = row.integer("input_tokens", 1);
  c.output_tokens = row.integer("output_tokens", 1);
  if (auto cell = row.find("random_range_ratio")) c.random_range_ratio = fraction_of(*cell);
  for (const auto& [column, metric] : kClosedLoopMetrics) {
    if (row.find(column)) measured[metric] = row.number(column, 0, true);
  }
  measured.overloaded =
      measured[ServingMetric::TtftMs] && *measured[ServingMetric::TtftMs] > 1000 * kOverloadedTtftS;
  return c;
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

}  // namespace

std::vector<ServingPoint> read_csv_points(const fs::path& file, const ServingPointOptions& options,
                                          const Setup* setup) {
  const std::string source = file.string();
  const std::string text = read_text_file(file);
  CsvCursor csv(text, source);
  // Lines before the header that start with '#' are comments (a data set's licence and
  // attribution lines, as the InferenceX file has).
  bool header = false;
  while (!header && csv.next_line())
    header = csv.fields().empty() || !csv.fields()[0].starts_with('#');
  if (!header) throw InputError(source, "empty file (no header, no rows)");
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
    if (!candidate.unless.empty() && columns.count(std::string(candidate.unless)) != 0) continue;
    if (kind != nullptr) {
      throw InputError(header_where, "both " + in_quotes(kind->marker) + " and " +
                                         in_quotes(candidate.marker) +
                                         ": one kind of serving point per file");
    }
    kind = &candidate;
  }
  if (kind == nullptr) {
    throw InputError(header_where,
                     "cannot tell the kind of serving point: expected a column concurrency "
                     "(a closed loop) or a measured column ttft_ms_mean (serving under load), "
                     "output_tokens_per_s_per_gpu (static batches) or total_tokens_per_s (a "
                     "burst)");
  }
  if (kind->kind == Kind::ClosedLoop &&
      std::none_of(kClosedLoopMetrics.begin(), kClosedLoopMetrics.end(),
                   [&](const auto& m) { return columns.count(std::string(m.first)) != 0; })) {
    throw InputError(header_where,
                     "a closed-loop file needs a measured column: ttft_ms_mean, tpot_ms_mean, "
                     "itl_ms_mean, e2e_ms_mean or output_tokens_per_s");
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
      case Kind::ClosedLoop:
        p.workload = read_closed_loop(row, p.measured);
        break;
    }
    points.push_back(std::move(p));
  }
  if (points.empty()) throw InputError(source, "no data rows after the header");
  return points;
}

}  // namespace servesim
