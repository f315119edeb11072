#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// `text` with &, <, >, " and ' as HTML entities.
std::string html_escape(std::string_view text);

// The folder and its subfolders, the folder first, the rest sorted (depth first).
std::vector<std::filesystem::path> output_folders(const std::filesystem::path& folder);
// The stems of the files in `dir` (not below) ending in `extension` (".svg"), sorted.
std::vector<std::string> stems_with(const std::filesystem::path& dir, const std::string& extension);

// The figures of an output folder and its subfolders as `servesim report` shows them.
struct ReportFigures {
  std::string html;
  std::size_t count = 0;                // figures on the page
  std::vector<std::string> unrendered;  // figures with a .gp script but no SVG or PNG
};

// Every figure: an SVG inline (the XML prolog dropped, its ids and the references to them
// prefixed per figure so that figures never share an id), else its PNG as a data URI, else
// named as not drawn; each with a caption of its path and what it shows.
ReportFigures report_figures(const std::filesystem::path& folder);

}  // namespace servesim
