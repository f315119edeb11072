#include "sim/calibration/vidur_import.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "sim/core/error.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

enum class Table { Mlp, Attention, AllReduce, CpuOverheads };

// Column name -> index of the header line, with errors naming the missing column.
class Columns {
 public:
  explicit Columns(const CsvCursor& cursor)
      : where_(cursor.source_name() + ":" + std::to_string(cursor.line_number())) {
    for (std::size_t i = 0; i < cursor.fields().size(); ++i)
      index_.emplace(std::string(cursor.fields()[i]), i);
  }
  bool has(std::string_view name) const { return index_.count(std::string(name)) != 0; }
  std::size_t at(std::string_view name) const {
    const auto it = index_.find(std::string(name));
    if (it == index_.end()) {
      throw InputError(where_, "missing column \"" + std::string(name) + "\" in the header");
    }
    return it->second;
  }

 private:
  std::string where_;  // the header line
  std::map<std::string, std::size_t> index_;
};

std::optional<Table> detect(const Columns& c) {
  if (c.has("time_stats.attn_pre_proj.median")) return Table::Mlp;
  if (c.has("time_stats.attn_decode.median") || c.has("time_stats.attn_prefill.median")) {
    return Table::Attention;
  }
  if (c.has("time_stats.all_reduce.median")) return Table::AllReduce;
  if (c.has("schedule_median")) return Table::CpuOverheads;
  return std::nullopt;
}

// Reads the fields of the current row by column name.
class Row {
 public:
  Row(const CsvCursor& cursor, const Columns& columns) : cursor_(cursor), columns_(columns) {}
  double number(std::string_view column) const {
    return cursor_.finite_number(columns_.at(column), column);
  }
  std::int64_t integer(std::string_view column) const {
    return cursor_.positive_integer(columns_.at(column), column);
  }
  std::string_view text(std::string_view column) const {
    return cursor_.fields().at(columns_.at(column));
  }
  bool boolean(std::string_view column) const {
    const std::string_view value = text(column);
    if (value == "True" || value == "true" || value == "1") return true;
    if (value == "False" || value == "false" || value == "0") return false;
    cursor_.fail(std::string(column) + ": expected True or False, got \"" + std::string(value) +
                 "\"");
  }
  // Milliseconds to seconds; a time must be positive.
  double ms(std::string_view column) const {
    const double value = number(column);
    if (!(value > 0)) {
      cursor_.fail(std::string(column) + ": expected a positive time in milliseconds");
    }
    return value * 1e-3;
  }

 private:
  const CsvCursor& cursor_;
  const Columns& columns_;
};

Measurement base_record(const CsvCursor& cursor, MeasurementKind kind, const std::string& device) {
  Measurement m;
  m.kind = kind;
  m.source = cursor.source_name();
  m.where = cursor.source_name() + ":" + std::to_string(cursor.line_number());
  m.device_name = device;
  return m;
}

void timed(Measurement& m, const Row& row, const std::string& op) {
  const std::string prefix = "time_stats." + op + ".";
  m.median_s = row.ms(prefix + "median");
  // Extremes are informative only; a zero minimum (a timer tick) is left out.
  if (const double min_ms = row.number(prefix + "min"); min_ms > 0) m.min_s = min_ms * 1e-3;
  if (const double max_ms = row.number(prefix + "max"); max_ms > 0) m.max_s = max_ms * 1e-3;
}

// "<org>/<model>" from compute/<device>/<org>/<model>/mlp.csv.
std::string model_from_path(const std::filesystem::path& path) {
  const auto model = path.parent_path().filename().string();
  const auto org = path.parent_path().parent_path().filename().string();
  return org.empty() ? model : org + "/" + model;
}

void import_mlp_row(const CsvCursor& cursor, const Row& row, const std::string& device,
                    const std::string& model, std::vector<Measurement>& out) {
  const std::int64_t tp = row.integer("num_tensor_parallel_workers");
  const std::int64_t hidden = row.integer("n_embd");
  const std::int64_t heads = row.integer("n_head");
  const std::int64_t kv_heads = row.integer("n_kv_head");
  const std::int64_t intermediate = row.integer("n_expanded_embd");
  const bool gated = row.boolean("use_gated_mlp");
  if (heads % tp != 0 || hidden % heads != 0 || (kv_heads % tp != 0 && tp % kv_heads != 0)) {
    cursor.fail("num_tensor_parallel_workers: " + std::to_string(tp) +
                " does not divide the heads of this model");
  }
  const std::int64_t head_dim = hidden / heads;
  const std::int64_t shard_heads = heads / tp;
  const std::int64_t shard_kv = kv_heads >= tp ? kv_heads / tp : 1;
  const std::int64_t shard_intermediate = (intermediate + tp - 1) / tp;
  struct Op {
    const char* column;
    const char* name;
    std::int64_t n, k;
  };
  const Op ops[] = {
      {"attn_pre_proj", "qkv", (shard_heads + 2 * shard_kv) * head_dim, hidden},
      {"attn_post_proj", "o", hidden, shard_heads * head_dim},
      {"mlp_up_proj", "mlp_up", (gated ? 2 : 1) * shard_intermediate, hidden},
      {"mlp_down_proj", "mlp_down", hidden, shard_intermediate},
  };
  const std::int64_t tokens = row.integer("num_tokens");
  for (const Op& op : ops) {
    Measurement m = base_record(cursor, MeasurementKind::Gemm, device);
    timed(m, row, op.column);
    m.model = model;
    m.tp = tp;
    m.gemm_operator = op.name;
    m.m = tokens;
    m.n = op.n;
    m.k = op.k;
    out.push_back(std::move(m));
  }
}

}  // namespace

std::vector<Measurement> import_vidur_csv(const std::filesystem::path& path,
                                          const std::string& device_name) {
  const std::string text = read_text_file(path);
  CsvCursor cursor(text, path.string());
  if (!cursor.next_line()) throw InputError(path.string(), "file is empty (expected a CSV header)");
  const Columns columns(cursor);
  const auto table = detect(columns);
  if (!table) {
    cursor.fail(
        "not a vidur profile table: expected the columns of mlp.csv, attention.csv, "
        "all_reduce.csv or cpu_overheads.csv");
  }
  const std::size_t width = cursor.fields().size();
  const std::string model = model_from_path(path);
  std::vector<Measurement> out;
  std::set<std::tuple<bool, std::int64_t, std::int64_t, std::int64_t>> seen_attention;
  while (cursor.next_line()) {
    cursor.expect_fields(width);
    const Row row(cursor, columns);
    switch (*table) {
      case Table::Mlp:
        import_mlp_row(cursor, row, device_name, model, out);
        break;
      case Table::Attention: {
        const bool prefill = row.boolean("is_prefill");
        const std::int64_t tp = row.integer("num_tensor_parallel_workers");
        const std::int64_t heads = row.integer("n_q_head");
        const std::int64_t kv_heads = row.integer("n_kv_head");
        const std::int64_t batch = row.integer("batch_size");
        const std::int64_t chunk = prefill ? row.integer("prefill_chunk_size") : 0;
        const double kv = row.number("kv_cache_size");
        if (kv < 0) cursor.fail("kv_cache_size: expected a non-negative token count");
        const auto context = static_cast<std::int64_t>(kv);
        if (!seen_attention.emplace(prefill, batch, chunk, context).second) break;
        Measurement m = base_record(
            cursor, prefill ? MeasurementKind::PrefillAttention : MeasurementKind::DecodeAttention,
            device_name);
        timed(m, row, prefill ? "attn_prefill" : "attn_decode");
        if (heads % tp != 0) cursor.fail("n_q_head: not divisible by the TP degree");
        m.tp = tp;
        m.num_heads = heads / tp;
        m.num_kv_heads = kv_heads >= tp ? kv_heads / tp : 1;
        m.head_dim = row.integer("n_embd") / heads;
        m.block_size = row.integer("block_size");
        m.batch = batch;
        m.chunk_tokens = chunk;
        m.context_tokens = context;
        if (!prefill && context == 0) cursor.fail("kv_cache_size: a decode needs context");
        out.push_back(std::move(m));
        break;
      }
      case Table::AllReduce: {
        const std::int64_t ranks = row.integer("num_workers");
        if (row.integer("devices_per_node") < ranks) break;  // spans nodes
        Measurement m = base_record(cursor, MeasurementKind::AllReduce, device_name);
        timed(m, row, "all_reduce");
        m.ranks = ranks;
        m.size_bytes = static_cast<double>(row.integer("size"));
        out.push_back(std::move(m));
        break;
      }
      case Table::CpuOverheads: {
        Measurement m = base_record(cursor, MeasurementKind::HostOverhead, device_name);
        for (const char* column : {"schedule_median", "sampler_e2e_median",
                                   "prepare_inputs_e2e_median", "process_model_outputs_median"}) {
          m.median_s += row.ms(column);
        }
        m.model = std::string(row.text("model_name"));
        m.tp = row.integer("tensor_parallel_degree");
        m.batch = row.integer("batch_size");
        out.push_back(std::move(m));
        break;
      }
    }
  }
  if (out.empty()) throw InputError(path.string(), "no data rows after the header");
  return out;
}

bool is_vidur_csv(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  CsvCursor cursor(text, path.string());
  if (!cursor.next_line()) return false;
  return detect(Columns(cursor)).has_value();
}

std::vector<std::filesystem::path> vidur_files_for_device(const std::filesystem::path& root,
                                                          const std::string& device) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  const fs::path compute = root / "compute" / device;
  if (fs::is_directory(compute, ec)) {
    for (const auto& entry : fs::recursive_directory_iterator(compute)) {
      if (entry.is_regular_file() && entry.path().filename() == "mlp.csv") {
        files.push_back(entry.path());
      }
    }
  }
  for (const fs::path& candidate :
       {root / "attention_history" / device / "attention.csv",
        root / "network" / (device + "_dgx") / "all_reduce.csv",
        root / "cpu_overheads_history" / device / "cpu_overheads.csv"}) {
    if (fs::is_regular_file(candidate, ec)) files.push_back(candidate);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace servesim
