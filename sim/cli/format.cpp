#include "sim/cli/format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace servesim::cli {

std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = bytes;
  std::size_t unit = 0;
  while (std::fabs(value) >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return format_fixed(value, value == std::floor(value) ? 0 : 1) + " B";
  return format_fixed(value, 2) + " " + kUnits[unit];
}

std::string format_count(double value) {
  std::string digits = format_fixed(std::floor(std::fabs(value)), 0);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return value < 0 ? "-" + grouped : grouped;
}

std::string format_si(double value, const std::string& unit) {
  static constexpr std::array<std::pair<double, const char*>, 6> kPrefixes{
      {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (const auto& [scale, prefix] : kPrefixes) {
    if (std::fabs(value) >= scale) return format_fixed(value / scale, 2) + " " + prefix + unit;
  }
  return format_fixed(value, 2) + " " + unit;
}

std::string format_seconds(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1) return format_fixed(seconds, 3) + " s";
  if (magnitude >= 1e-3) return format_fixed(seconds * 1e3, 3) + " ms";
  return format_fixed(seconds * 1e6, 2) + " us";
}

Table::Table(std::vector<std::string> header, std::vector<std::size_t> text_columns)
    : text_columns_(std::move(text_columns)) {
  rows_.push_back(std::move(header));
}

void Table::add_row(std::vector<std::string> cells) {
  rows_.push_back(std::move(cells));
}

void Table::add_separator() {
  rows_.emplace_back();
}

namespace {

// `text` in lines of at most `width` characters, broken at spaces (a longer word whole).
std::vector<std::string> wrap_words(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t space = std::min(text.find(' ', start), text.size());
    std::string word = text.substr(start, space - start);
    // A word wider than the column (a dotted key with its value) is cut into pieces.
    while (word.size() > width && width > 0) {
      if (!line.empty()) lines.push_back(line);
      line.clear();
      lines.push_back(word.substr(0, width));
      word.erase(0, width);
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = space + 1;
  }
  lines.push_back(line);
  return lines;
}

}  // namespace

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  }
  const auto total_width = [&widths] {
    std::size_t total = 0;
    for (const auto w : widths)
      total += w + 2;
    return total > 2 ? total - 2 : 0;
  };
  // Narrow the widest text column, down to 16 characters, until the table fits.
  constexpr std::size_t kNarrowest = 16;
  while (max_width_ > 0 && total_width() > max_width_) {
    std::size_t widest = 0;
    for (const std::size_t i : text_columns_) {
      if (i > 0 && i < widths.size() && widths[i] > kNarrowest &&
          (widest == 0 || widths[i] > widths[widest])) {
        widest = i;
      }
    }
    if (widest == 0) break;
    widths[widest] = std::max(kNarrowest, widths[widest] - (total_width() - max_width_));
  }
  const auto rule = std::string(total_width(), '-');
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    const auto& row = rows_[r];
    if (row.empty()) {
      out << rule << '\n';
      continue;
    }
    std::vector<std::vector<std::string>> cells;
    std::size_t lines = 1;
    for (std::size_t i = 0; i < row.size(); ++i) {
      cells.push_back(row[i].size() > widths[i] ? wrap_words(row[i], widths[i])
                                                : std::vector<std::string>{row[i]});
      lines = std::max(lines, cells.back().size());
    }
    for (std::size_t line = 0; line < lines; ++line) {
      std::string text;
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i > 0) text += "  ";
        const std::string& cell = line < cells[i].size() ? cells[i][line] : std::string();
        const bool left = i == 0 || std::find(text_columns_.begin(), text_columns_.end(), i) !=
                                        text_columns_.end();
        const std::string pad(widths[i] > cell.size() ? widths[i] - cell.size() : 0, ' ');
        text += left ? cell + pad : pad + cell;
      }
      out << text << '\n';
    }
    if (r == 0) out << rule << '\n';
  }
}

}  // namespace servesim::cli
