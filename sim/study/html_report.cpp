#include "sim/study/html_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/core/version.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/summary_columns.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

std::string escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

// A number for a table: integers whole, others to four significant digits.
std::string number_text(double value) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
  if (value == std::round(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<long long>(value));
  }
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.4g", value);
  return buffer.data();
}

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

// A table: a header row and body rows; a cell that reads as a number is right-aligned.
std::string table_html(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::string html = "<div class=\"scroll\"><table>\n<thead><tr>";
  for (const auto& name : header)
    html += "<th>" + escape(name) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    html += "<tr>";
    for (const auto& cell : row) {
      html += parse_number(cell) || cell == "-" ? "<td>" : "<td class=\"text\">";
      html += escape(cell) + "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table></div>\n";
}

std::string details_html(const std::string& summary, const std::string& body) {
  return "<details><summary>" + escape(summary) + "</summary>\n" + body + "</details>\n";
}

// --- Headline tables ---------------------------------------------------------------------

// A summary's statistic in the unit the table shows, or "-".
std::string stat_cell(const nlohmann::json& summary, const std::string& path, double scale) {
  const nlohmann::json* node = &summary;
  std::string::size_type start = 0;
  while (node != nullptr && start <= path.size()) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const auto it = node->find(key);
    node = it == node->end() ? nullptr : &*it;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (node == nullptr || !node->is_number()) return "-";
  return number_text(node->get<double>() * scale);
}

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

struct CsvData {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

CsvData read_csv(const fs::path& path) {
  auto rows = parse_csv(read_text_file(path), path.string());
  CsvData data;
  if (rows.empty()) return data;
  data.header = std::move(rows.front());
  data.rows.assign(std::make_move_iterator(rows.begin() + 1), std::make_move_iterator(rows.end()));
  return data;
}

// The headline of a table of points: its key columns, then the figures most studies are
// read by (latencies in ms), those the file has.
std::string points_headline(const CsvData& csv, const std::vector<std::string>& keys) {
  struct Column {
    const char* title;
    const char* name;
    double scale;
  };
  static const std::array<Column, 12> kColumns{{
      {"req/s", "throughput_requests_per_s", 1},
      {"steady req/s", "steady_state.throughput_requests_per_s", 1},
      {"output tok/s", "throughput_output_tokens_per_s", 1},
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
  std::vector<std::vector<std::string>> rows = csv.rows;
  return details_html(name + ": " + std::to_string(rows.size()) + " rows, " +
                          std::to_string(csv.header.size()) + " columns",
                      table_html(csv.header, rows));
}

// The best deployments of a capacity search with --target-rate.
std::string capacity_answers(const nlohmann::json& summary) {
  std::vector<std::vector<std::string>> rows;
  const auto add = [&](const std::string& what, const nlohmann::json& entry) {
    if (!entry.is_object()) {
      rows.push_back({what, "none", "-", "-", "-"});
      return;
    }
    std::string deployment = entry.value("deployment", "");
    if (deployment.empty()) {
      deployment = entry.value("hardware", std::string("?")) + " tp" +
                   std::to_string(entry.value("tp", 0)) + " pp" +
                   std::to_string(entry.value("pp", 0));
    }
    const auto cell = [&](const char* key) {
      return entry.contains(key) && entry[key].is_number() ? number_text(entry[key].get<double>())
                                                           : std::string("-");
    };
    std::string replicas = "-";
    if (entry.contains("replicas")) {
      replicas =
          entry["replicas"].is_string() ? entry["replicas"].get<std::string>() : cell("replicas");
    }
    rows.push_back({what + ": " + deployment, replicas, cell("gpus"), cell("usd_per_hour"),
                    cell("usd_per_million_tokens")});
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
  return table_html({"deployment", "replicas", "GPUs", "$/hour", "$/M tokens"}, rows);
}

// --- Figures -------------------------------------------------------------------------------

std::string figure_description(const std::string& stem) {
  static const std::map<std::string, std::string> kDescriptions{
      {"latency_cdf", "TTFT and TPOT distributions"},
      {"kv_memory", "where KV memory goes over time"},
      {"batch_size", "batch size over time"},
      {"prefix_cache_hit_rate", "prefix-cache hit rate over time"},
      {"ttft_breakdown", "TTFT in its parts (disaggregated serving)"},
      {"latency_throughput", "latency against throughput"},
      {"latency_bars", "latency of each policy"},
      {"kv_breakdown", "KV memory of each policy"},
      {"capacity", "the points the search simulated against the SLO"},
  };
  const auto it = kDescriptions.find(stem);
  return it == kDescriptions.end() ? "" : it->second;
}

bool id_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
         c == ':';
}

// An SVG document as an element of the page: the XML prolog dropped, and its ids (and the
// references to them) prefixed, so that two figures' ids never collide on one page.
std::string inline_svg(const std::string& text, const std::string& prefix, const fs::path& path,
                       const std::string& label) {
  const auto start = text.find("<svg");
  if (start == std::string::npos) throw InputError(path.string(), "holds no <svg> element");
  const std::string svg = text.substr(start);
  std::set<std::string, std::less<>> ids;
  for (std::size_t at = svg.find("id="); at != std::string::npos; at = svg.find("id=", at + 3)) {
    const bool attribute = at > 0 && std::isspace(static_cast<unsigned char>(svg[at - 1])) != 0;
    if (!attribute || at + 3 >= svg.size() || (svg[at + 3] != '"' && svg[at + 3] != '\'')) {
      continue;
    }
    const auto close = svg.find(svg[at + 3], at + 4);
    if (close != std::string::npos) ids.insert(svg.substr(at + 4, close - at - 4));
  }
  std::string out;
  out.reserve(svg.size() + ids.size() * prefix.size() * 2);
  for (std::size_t i = 0; i < svg.size(); ++i) {
    const char c = svg[i];
    out += c;
    const bool id_value = (c == '"' || c == '\'') && i >= 3 && svg.compare(i - 3, 3, "id=") == 0;
    const bool reference =
        c == '#' && i > 0 && (svg[i - 1] == '"' || svg[i - 1] == '\'' || svg[i - 1] == '(');
    if (!id_value && !reference) continue;
    std::size_t end = i + 1;
    while (end < svg.size() && id_char(svg[end]))
      ++end;
    if (ids.contains(std::string_view(svg).substr(i + 1, end - i - 1))) out += prefix;
  }
  // Named for screen readers, and marked so that a test can find the figures.
  const std::string open =
      "<svg class=\"figure\" role=\"img\" aria-label=\"" + escape(label) + "\"";
  return open + out.substr(4);
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t chunk = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

// The folder and its subfolders holding servesim output, the folder first, the rest sorted.
std::vector<fs::path> output_folders(const fs::path& folder) {
  std::vector<fs::path> folders{folder};
  std::vector<fs::path> subfolders;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.is_directory()) subfolders.push_back(entry.path());
  }
  std::sort(subfolders.begin(), subfolders.end());
  for (const auto& sub : subfolders) {
    const auto more = output_folders(sub);
    folders.insert(folders.end(), more.begin(), more.end());
  }
  return folders;
}

std::vector<std::string> stems_with(const fs::path& dir, const std::string& extension) {
  std::vector<std::string> stems;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == extension) {
      stems.push_back(entry.path().stem().string());
    }
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::string figures_html(const fs::path& folder, HtmlReport& report) {
  std::string html;
  for (const auto& dir : output_folders(folder)) {
    const std::string where = fs::relative(dir, folder).generic_string();
    const std::string prefix_path = where == "." ? "" : where + "/";
    std::set<std::string> stems;
    for (const char* extension : {".svg", ".png", ".gp"}) {
      for (auto& stem : stems_with(dir, extension))
        stems.insert(std::move(stem));
    }
    for (const auto& stem : stems) {
      const std::string name = prefix_path + stem;
      const std::string description = figure_description(stem);
      const std::string label = name + (description.empty() ? "" : ": " + description);
      std::string body;
      if (fs::exists(dir / (stem + ".svg"))) {
        const std::string id_prefix = "f" + std::to_string(report.figures + 1) + "-";
        body = inline_svg(read_text_file(dir / (stem + ".svg")), id_prefix, dir / (stem + ".svg"),
                          label);
      } else if (fs::exists(dir / (stem + ".png"))) {
        body = "<img class=\"figure\" alt=\"" + escape(label) + "\" src=\"data:image/png;base64," +
               base64(read_text_file(dir / (stem + ".png"))) + "\">";
      } else {
        report.unrendered.push_back(name);
        continue;
      }
      ++report.figures;
      html += "<figure id=\"figure-" + std::to_string(report.figures) + "\">\n" + body +
              "\n<figcaption><b>" + escape(name) + "</b>" +
              (description.empty() ? "" : " &middot; " + escape(description)) +
              "</figcaption>\n</figure>\n";
    }
  }
  if (!report.unrendered.empty()) {
    std::string names;
    for (const auto& name : report.unrendered)
      names += (names.empty() ? "" : ", ") + name;
    html +=
        "<p class=\"note\">Not drawn (only their gnuplot scripts are in the folder; "
        "<code>servesim plot</code> renders them): " +
        escape(names) + "</p>\n";
  }
  if (report.figures == 0 && report.unrendered.empty()) {
    html += "<p class=\"note\">The folder holds no figures.</p>\n";
  }
  return html;
}

// --- The page --------------------------------------------------------------------------------

std::string kind_of(const fs::path& folder) {
  if (fs::exists(folder / "sweep.csv")) return "sweep";
  if (fs::exists(folder / "compare.csv")) return "compare";
  if (fs::exists(folder / "capacity.csv")) return "capacity";
  if (fs::exists(folder / "resolved_config.json")) return "run";
  throw InputError(folder.string(),
                   "holds no servesim output (expected summary.json beside sweep.csv, "
                   "compare.csv, capacity.csv or resolved_config.json)");
}

constexpr std::string_view kStyle = R"(
:root { color-scheme: light; }
body { margin: 0; color: #1b1b1b; background: #fff; line-height: 1.45;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0.2rem 0; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
h3 { font-size: 1rem; margin-bottom: 0.3rem; }
.meta, .note, figcaption { color: #555; font-size: 0.9rem; }
pre { background: #f5f5f5; padding: 0.6rem; white-space: pre-wrap; word-break: break-word;
  font-size: 0.8rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 0.2rem 0.5rem; text-align: right;
  white-space: nowrap; }
th { background: #f2f2f2; }
td.text { text-align: left; white-space: normal; min-width: 8rem; }
figure { margin: 1.2rem 0; break-inside: avoid; page-break-inside: avoid; }
figure .figure { display: block; width: 100%; height: auto; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; }
@media (max-width: 600px) { main { padding: 0.5rem; } h1 { font-size: 1.25rem; } }
@media print { main { max-width: none; padding: 0; } .scroll { overflow: visible; }
  details { display: none; } a { color: inherit; } }
)";

}  // namespace

HtmlReport html_report(const fs::path& folder) {
  if (!fs::is_directory(folder)) throw InputError(folder.string(), "no such folder");
  const fs::path summary_path = folder / "summary.json";
  if (!fs::exists(summary_path)) {
    throw InputError(folder.string(), "holds no summary.json: not a servesim output folder");
  }
  HtmlReport report;
  report.kind = kind_of(folder);
  const nlohmann::json summary = read_json_file(summary_path);
  std::string name = fs::absolute(folder).lexically_normal().filename().string();
  if (name.empty())
    name = fs::absolute(folder).lexically_normal().parent_path().filename().string();

  std::string made_by = "not recorded in the folder";
  std::string command;
  if (fs::exists(folder / "command.json")) {
    const nlohmann::json record = read_json_file(folder / "command.json");
    made_by = "servesim " + record.value("servesim_version", std::string("?"));
    command = record.value("command", std::string());
  }

  std::string headline;
  std::string data;
  if (report.kind == "run") {
    headline = run_headline(summary);
    for (const char* file : {"requests.csv", "iterations.csv"}) {
      if (fs::exists(folder / file)) {
        data += "<p class=\"note\">" + std::string(file) + " (one row per " +
                (file[0] == 'r' ? "request" : "iteration") +
                ") is in the folder; it is not copied into this page.</p>\n";
      }
    }
  } else {
    const std::string csv_name = report.kind + ".csv";
    const CsvData csv = read_csv(folder / csv_name);
    std::vector<std::string> keys;
    if (report.kind == "sweep") {
      keys.emplace_back("point");
      for (const auto& axis : summary.value("axes", nlohmann::json::array()))
        if (axis.is_string()) keys.push_back(axis.get<std::string>());
    } else if (report.kind == "compare") {
      keys.emplace_back("policy");
    } else {
      if (summary.contains("message") && summary["message"].is_string()) {
        headline += "<p><b>" + escape(summary["message"].get<std::string>()) + "</b></p>\n";
      }
      headline += capacity_answers(summary);
      const auto met = std::find(csv.header.begin(), csv.header.end(), "met");
      keys.assign(csv.header.begin(), met);
      keys.insert(keys.end(), {"met", "violations"});
      headline += "<h3>Points simulated</h3>\n";
    }
    headline += points_headline(csv, keys);
    data += csv_details(folder / csv_name, csv_name);
  }
  std::vector<std::vector<std::string>> all_figures;
  for (const auto& [column, value] : summary_columns(summary))
    all_figures.push_back({column, number_text(value)});
  if (report.kind == "run")
    data += details_html("summary.json", table_html({"key", "value"}, all_figures));

  std::string configs;
  for (const auto& dir : output_folders(folder)) {
    for (const auto& stem : stems_with(dir, ".json")) {
      const fs::path path = dir / (stem + ".json");
      const bool config = stem == "resolved_config" || dir.filename() == "front";
      if (!config) continue;
      configs += details_html(fs::relative(path, folder).generic_string(),
                              "<pre>" + escape(read_json_file(path).dump(2)) + "</pre>\n");
    }
  }

  std::string html;
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"servesim " +
      std::string(servesim_version()) + "\">\n<title>servesim " + report.kind + ": " +
      escape(name) + "</title>\n<style>" + std::string(kStyle) +
      "</style>\n</head>\n<body>\n<main>\n";
  html += "<header>\n<h1>servesim " + report.kind + ": " + escape(name) + "</h1>\n";
  html += "<p class=\"meta\">Written by " + escape(made_by) + "; this page by servesim report " +
          std::string(servesim_version()) + ".</p>\n";
  if (!command.empty()) html += "<pre class=\"command\">" + escape(command) + "</pre>\n";
  html += "</header>\n";
  html += "<section id=\"summary\">\n<h2>Summary</h2>\n" + headline + "</section>\n";
  html += "<section id=\"figures\">\n<h2>Figures</h2>\n" + figures_html(folder, report) +
          "</section>\n";
  html += "<section id=\"data\">\n<h2>Data</h2>\n" + data + "</section>\n";
  if (!configs.empty()) {
    html += "<section id=\"configuration\">\n<h2>Configuration</h2>\n" + configs + "</section>\n";
  }
  html += "</main>\n</body>\n</html>\n";
  report.html = std::move(html);
  return report;
}

}  // namespace servesim
