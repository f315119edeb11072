#include "sim/study/report_tables.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "sim/core/json_reader.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/report_figures.h"
#include "sim/study/summary_columns.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {

namespace fs = std::filesystem;

// A number for a table: integers whole, others to four significant digits in fixed point
// without trailing zeros (never an exponent: 12345.6 ms is "12346", 12.30 is "12.3", 0.00123
// s is "0.00123"), at most 6 decimals.
std::string number_text(double value) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
  if (value == std::round(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<long long>(value));
  }
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(3 - magnitude, 0, 6);
  std::array<char, 64> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.*f", decimals, value);
  std::string text = buffer.data();
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

namespace {

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  try {
    std::size_t end = 0;
    const double value = std::stod(text, &end);
    if (end == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

// A table: a header row and body rows; a cell that reads as a number is right-aligned.
std::string table_html(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::string html = "<div class=\"scroll\"><table>\n<thead><tr>";
  for (const auto& name : header)
    html += "<th>" + html_escape(name) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    html += "<tr>";
    for (const auto& cell : row) {
      html += parse_number(cell) || cell == "-" ? "<td>" : "<td class=\"text\">";
      html += html_escape(cell) + "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table></div>\n";
}

std::string details_html(const std::string& summary, const std::string& body) {
  return "<details><summary>" + html_escape(summary) + "</summary>\n" + body + "</details>\n";
}

// --- Headline tables ---------------------------------------------------------------------

namespace {

// A summary's statistic in the unit the table shows, or "-".
std::string stat_cell(const nlohmann::json& summary, const std::string& path, double scale) {
  const auto value = find_summary_value(summary, path);
  return value ? number_text(*value * scale) : "-";
}

}  // namespace

std::string run_headline(const nlohmann::json& summary) {
  std::vector<std::vector<std::string>> latency;
  const std::array<std::pair<const char*, const char*>, 4> metrics{
      {{"TTFT", "ttft_s"}, {"TPOT", "tpot_s"}, {"ITL", "itl_s"}, {"E2E", "e2e_s"}}};
  for (const auto& [name, key] : metrics) {
    std::vector<std::string> row{name};
    for (const char* stat : {"mean", "p50", "p90", "p99", "max"})
      row.push_back(stat_cell(summary, std::string(key) + "." + stat, 1e3));
    latency.push_back(std::move(row));
  }
  std::string html = "<h3>Latency (ms)</h3>\n" +
                     table_html({"metric", "mean", "p50", "p90", "p99", "max"}, latency);
  const std::array<std::tuple<const char*, const char*, double>, 10> load{{
      {"requests completed", "requests_completed", 1},
      {"requests rejected", "requests_rejected", 1},
      {"simulated duration (s)", "duration_s", 1},
      {"throughput (requests/s)", "throughput_requests_per_s", 1},
      {"output tokens/s", "throughput_output_tokens_per_s", 1},
      {"total tokens/s", "throughput_total_tokens_per_s", 1},
      {"mean batch size", "mean_batch_size", 1},
      {"preemptions", "preemptions", 1},
      {"KV utilization (%)", "kv_utilization", 100},
      {"prefix-cache hit rate (%)", "prefix_cache_hit_rate", 100},
  }};
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, key, scale] : load)
    rows.push_back({name, stat_cell(summary, key, scale)});
  html += "<h3>Load</h3>\n" + table_html({"figure", "value"}, rows);
  if (const auto it = summary.find("kv_memory"); it != summary.end() && it->is_object()) {
    rows.clear();
    for (const auto& [share, value] : it->items()) {
      if (value.is_number()) rows.push_back({share, number_text(value.get<double>() * 100)});
    }
    html += "<h3>KV memory, time-weighted share (%)</h3>\n" + table_html({"part", "%"}, rows);
  }
  return html;
}

CsvData read_csv(const fs::path& path) {
  auto rows = parse_csv(read_text_file(path), path.string());
  CsvData data;
  if (rows.empty()) return data;
  data.header = std::move(rows.front());
  data.rows.assign(std::make_move_iterator(rows.begin() + 1), std::make_move_iterator(rows.end()));
  return data;
}

// The headline of a table of points: its key columns, then the figures most studies are
// read by (latencies in ms), those the file has, named as the console's tables name them:
// req/s and tokens/s over the steady state, run req/s over the whole run, drain included.
std::string points_headline(const CsvData& csv, const std::vector<std::string>& keys) {
  struct Column {
    const char* title;
    const char* name;
    double scale;
  };
  static const std::array<Column, 14> kColumns{{
      {"req/s", "steady_state.throughput_requests_per_s", 1},
      {"run req/s", "throughput_requests_per_s", 1},
      {"offered req/s", "steady_state.offered_requests_per_s", 1},
      {"served %", "steady_state.served_ratio", 100},
      {"tokens/s", "steady_state.throughput_output_tokens_per_s", 1},
      {"TTFT p50 ms", "ttft_s.p50", 1e3},
      {"TTFT p99 ms", "ttft_s.p99", 1e3},
      {"TPOT p50 ms", "tpot_s.p50", 1e3},
      {"TPOT p99 ms", "tpot_s.p99", 1e3},
      {"ITL p50 ms", "itl_s.p50", 1e3},
      {"ITL p99 ms", "itl_s.p99", 1e3},
      {"E2E p99 s", "e2e_s.p99", 1},
      {"preempted", "preemptions", 1},
      {"rejected", "requests_rejected", 1},
  }};
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < csv.header.size(); ++i)
    index[csv.header[i]] = i;
  std::vector<std::string> header;
  std::vector<std::pair<std::size_t, double>> shown;
  for (const auto& key : keys) {
    if (const auto it = index.find(key); it != index.end()) {
      header.push_back(key);
      shown.emplace_back(it->second, 0);
    }
  }
  for (const auto& column : kColumns) {
    if (const auto it = index.find(column.name); it != index.end()) {
      header.emplace_back(column.title);
      shown.emplace_back(it->second, column.scale);
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : csv.rows) {
    std::vector<std::string> cells;
    for (const auto& [i, scale] : shown) {
      const std::string cell = i < row.size() ? row[i] : "";
      const auto value = parse_number(cell);
      cells.push_back(scale != 0 && value ? number_text(*value * scale) : cell);
    }
    rows.push_back(std::move(cells));
  }
  return table_html(header, rows);
}

std::string csv_details(const fs::path& path, const std::string& name) {
  const CsvData csv = read_csv(path);
  return details_html(name + ": " + std::to_string(csv.rows.size()) + " rows, " +
                          std::to_string(csv.header.size()) + " columns",
                      table_html(csv.header, csv.rows));
}

namespace {

// A number of a JSON entry for a table, or "-".
std::string entry_cell(const nlohmann::json& entry, const char* key) {
  return entry.contains(key) && entry[key].is_number() ? number_text(entry[key].get<double>())
                                                       : std::string("-");
}

// A deployment's replicas as the console shows them: "3", or "2p1d" for a prefill/decode
// layout, "-" without an answer.
std::string replicas_cell(const nlohmann::json& entry) {
  if (const auto it = entry.find("replicas"); it != entry.end()) {
    return it->is_string() ? it->get<std::string>() : entry_cell(entry, "replicas");
  }
  const auto role = [&](const char* name) {
    return entry.contains(name) && entry[name].is_object() ? entry_cell(entry[name], "replicas")
                                                           : std::string("-");
  };
  const std::string prefill = role("prefill");
  const std::string decode = role("decode");
  return prefill == "-" || decode == "-" ? "-" : prefill + "p" + decode + "d";
}

}  // namespace

// The best deployments of a capacity search with --target-rate, and the Pareto front of a
// layout search, named as the console names them.
std::string capacity_answers(const nlohmann::json& summary) {
  std::vector<std::vector<std::string>> rows;
  const auto add = [&](const std::string& what, const nlohmann::json& entry) {
    if (!entry.is_object()) {
      rows.push_back({what, "none", "-", "-", "-"});
      return;
    }
    std::string deployment = entry.value("deployment", "");
    if (deployment.empty()) {
      // A shape of the replica search, as ReplicaShape::label() names it.
      deployment = entry.value("hardware", std::string("?")) + " tp" +
                   std::to_string(entry.value("tp", 1)) + " pp" +
                   std::to_string(entry.value("pp", 1));
    }
    rows.push_back({what + ": " + deployment, replicas_cell(entry), entry_cell(entry, "gpus"),
                    entry_cell(entry, "usd_per_hour"),
                    entry_cell(entry, "usd_per_million_tokens")});
  };
  if (const auto best = summary.find("best"); best != summary.end() && best->is_object()) {
    for (const auto& [kind, entry] : best->items())
      add("best " + kind, entry);
  } else if (const auto shapes = summary.find("shapes");
             shapes != summary.end() && shapes->is_array()) {
    for (const auto& entry : *shapes)
      add("shape", entry);
  }
  if (rows.empty()) return "";
  std::string html = table_html({"deployment", "replicas", "GPUs", "$/hour", "$/M tokens"}, rows);
  if (const auto front = summary.find("front");
      front != summary.end() && front->is_array() && !front->empty()) {
    std::vector<std::vector<std::string>> points;
    for (const auto& entry : *front) {
      if (!entry.is_object()) continue;
      points.push_back({entry.value("deployment", std::string("?")), replicas_cell(entry),
                        entry_cell(entry, "gpus"), entry_cell(entry, "output_tokens_per_s_per_gpu"),
                        entry_cell(entry, "output_tokens_per_s_per_user"),
                        entry.contains("config") && entry["config"].is_string()
                            ? entry["config"].get<std::string>()
                            : std::string("-")});
    }
    html +=
        "<h3>Pareto front of the points meeting the SLO</h3>\n"
        "<p class=\"note\">Output tokens/s per GPU at the target rate against per user "
        "(1 / mean TPOT); no point beats one of these on both.</p>\n" +
        table_html({"deployment", "replicas", "GPUs", "tok/s/GPU", "tok/s/user", "config"}, points);
  }
  return html;
}

}  // namespace servesim
