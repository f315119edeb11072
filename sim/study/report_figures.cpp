#include "sim/study/report_figures.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>

#include "sim/core/error.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

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
      "<svg class=\"figure\" role=\"img\" aria-label=\"" + html_escape(label) + "\"";
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

}  // namespace

std::string html_escape(std::string_view text) {
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

ReportFigures report_figures(const fs::path& folder) {
  ReportFigures report;
  std::string& html = report.html;
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
        const std::string id_prefix = "f" + std::to_string(report.count + 1) + "-";
        body = inline_svg(read_text_file(dir / (stem + ".svg")), id_prefix, dir / (stem + ".svg"),
                          label);
      } else if (fs::exists(dir / (stem + ".png"))) {
        body = "<img class=\"figure\" alt=\"" + html_escape(label) +
               "\" src=\"data:image/png;base64," + base64(read_text_file(dir / (stem + ".png"))) +
               "\">";
      } else {
        report.unrendered.push_back(name);
        continue;
      }
      ++report.count;
      html += "<figure id=\"figure-" + std::to_string(report.count) + "\">\n" + body +
              "\n<figcaption><b>" + html_escape(name) + "</b>" +
              (description.empty() ? "" : " &middot; " + html_escape(description)) +
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
        html_escape(names) + "</p>\n";
  }
  if (report.count == 0 && report.unrendered.empty()) {
    html += "<p class=\"note\">The folder holds no figures.</p>\n";
  }
  return report;
}

}  // namespace servesim
