#include "sim/study/html_report.h"

#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/core/version.h"
#include "sim/study/report_figures.h"
#include "sim/study/report_tables.h"
#include "sim/study/summary_columns.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

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

// The folder's own name, or its parent's for a path ending in a separator.
std::string report_folder_name(const fs::path& folder) {
  std::string name = fs::absolute(folder).lexically_normal().filename().string();
  if (name.empty())
    name = fs::absolute(folder).lexically_normal().parent_path().filename().string();
  return name;
}

// Which servesim wrote the folder, and its command line, from command.json.
struct ReportProvenance {
  std::string made_by = "not recorded in the folder";
  std::string command;
};
ReportProvenance report_provenance(const fs::path& folder) {
  ReportProvenance provenance;
  if (fs::exists(folder / "command.json")) {
    const nlohmann::json record = read_json_file(folder / "command.json");
    provenance.made_by = "servesim " + record.value("servesim_version", std::string("?"));
    provenance.command = record.value("command", std::string());
  }
  return provenance;
}

// The page's summary section (its headline) and data section.
struct ReportSections {
  std::string headline;
  std::string data;
};

// A run's: its headline figures; the record files named, and summary.json as a table.
ReportSections run_report_sections(const fs::path& folder, const nlohmann::json& summary) {
  ReportSections sections;
  sections.headline = run_headline(summary);
  for (const char* file : {"requests.csv", "iterations.csv"}) {
    if (fs::exists(folder / file)) {
      sections.data += "<p class=\"note\">" + std::string(file) + " (one row per " +
                       (file[0] == 'r' ? "request" : "iteration") +
                       ") is in the folder; it is not copied into this page.</p>\n";
    }
  }
  std::vector<std::vector<std::string>> all_figures;
  for (const auto& [column, value] : summary_columns(summary))
    all_figures.push_back({column, number_text(value)});
  sections.data += details_html("summary.json", table_html({"key", "value"}, all_figures));
  return sections;
}

// A sweep's, a comparison's or a capacity search's: its points (and a search's answers), and
// its CSV file.
ReportSections points_report_sections(const fs::path& folder, const std::string& kind,
                                      const nlohmann::json& summary) {
  ReportSections sections;
  std::string& headline = sections.headline;
  const std::string csv_name = kind + ".csv";
  const CsvData csv = read_csv(folder / csv_name);
  std::vector<std::string> keys;
  if (kind == "sweep") {
    keys.emplace_back("point");
    for (const auto& axis : summary.value("axes", nlohmann::json::array()))
      if (axis.is_string()) keys.push_back(axis.get<std::string>());
  } else if (kind == "compare") {
    keys.emplace_back("policy");
  } else {
    if (summary.contains("message") && summary["message"].is_string()) {
      headline += "<p><b>" + html_escape(summary["message"].get<std::string>()) + "</b></p>\n";
    }
    headline += capacity_answers(summary);
    const auto met = std::find(csv.header.begin(), csv.header.end(), "met");
    keys.assign(csv.header.begin(), met);
    keys.insert(keys.end(), {"met", "violations"});
    headline += "<h3>Points simulated</h3>\n";
  }
  headline += points_headline(csv, keys);
  sections.data += csv_details(folder / csv_name, csv_name);
  return sections;
}

// Each resolved_config.json (and a capacity front's configurations), folded.
std::string configurations_html(const fs::path& folder) {
  std::string configs;
  for (const auto& dir : output_folders(folder)) {
    for (const auto& stem : stems_with(dir, ".json")) {
      const fs::path path = dir / (stem + ".json");
      const bool config = stem == "resolved_config" || dir.filename() == "front";
      if (!config) continue;
      configs += details_html(fs::relative(path, folder).generic_string(),
                              "<pre>" + html_escape(read_json_file(path).dump(2)) + "</pre>\n");
    }
  }
  return configs;
}

std::string report_page_html(const std::string& kind, const std::string& name,
                             const ReportProvenance& provenance, const ReportSections& sections,
                             const std::string& figures_html, const std::string& configs) {
  std::string html;
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"servesim " +
      std::string(servesim_version()) + "\">\n<title>servesim " + kind + ": " + html_escape(name) +
      "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";
  html += "<header>\n<h1>servesim " + kind + ": " + html_escape(name) + "</h1>\n";
  html += "<p class=\"meta\">Written by " + html_escape(provenance.made_by) +
          "; this page by servesim report " + std::string(servesim_version()) + ".</p>\n";
  if (!provenance.command.empty()) {
    html += "<pre class=\"command\">" + html_escape(provenance.command) + "</pre>\n";
  }
  html += "</header>\n";
  html += "<section id=\"summary\">\n<h2>Summary</h2>\n" + sections.headline + "</section>\n";
  html += "<section id=\"figures\">\n<h2>Figures</h2>\n" + figures_html + "</section>\n";
  html += "<section id=\"data\">\n<h2>Data</h2>\n" + sections.data + "</section>\n";
  if (!configs.empty()) {
    html += "<section id=\"configuration\">\n<h2>Configuration</h2>\n" + configs + "</section>\n";
  }
  html += "</main>\n</body>\n</html>\n";
  return html;
}

}  // namespace

HtmlReport html_report(const fs::path& folder) {
  if (!fs::is_directory(folder)) throw InputError(folder.string(), "no such folder");
  const fs::path summary_path = folder / "summary.json";
  if (!fs::exists(summary_path)) {
    throw InputError(folder.string(), "holds no summary.json: not a servesim output folder");
  }
  HtmlReport report;
  report.kind = kind_of(folder);
  ReportFigures figures = report_figures(folder);
  report.figures = figures.count;
  report.unrendered = std::move(figures.unrendered);
  const nlohmann::json summary = read_json_file(summary_path);
  const std::string name = report_folder_name(folder);
  const ReportProvenance provenance = report_provenance(folder);
  const ReportSections sections = report.kind == "run"
                                      ? run_report_sections(folder, summary)
                                      : points_report_sections(folder, report.kind, summary);
  const std::string configs = configurations_html(folder);
  report.html = report_page_html(report.kind, name, provenance, sections, figures.html, configs);
  return report;
}

}  // namespace servesim
