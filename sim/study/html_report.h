#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace servesim {

// `servesim report`: one self-contained HTML page of an output folder.
struct HtmlReport {
  std::string html;
  std::string kind;                     // "run", "sweep", "compare" or "capacity"
  std::size_t figures = 0;              // figures on the page
  std::vector<std::string> unrendered;  // figures with a .gp script but no SVG or PNG
};

// Reads the output folder of `servesim run`, `sweep`, `compare` or `capacity` and builds its
// report: the command that wrote it and the servesim version (command.json), the headline
// figures as tables, every figure of the folder and its subfolders (SVG inline, PNG as a data
// URI where no SVG was drawn), the CSV tables whole and the configurations. The page loads
// nothing from elsewhere and runs no script; it reads on a phone and prints. Throws
// InputError naming the folder when it holds no servesim output.
HtmlReport html_report(const std::filesystem::path& folder);

}  // namespace servesim
