#include "tests/architecture/layering_check.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace servesim::test {
namespace {

// The lines of the fenced block that opens with "```<tag>".
std::vector<std::string> fenced_block(const std::string& markdown, const std::string& tag) {
  std::istringstream in(markdown);
  std::vector<std::string> lines;
  bool inside = false;
  bool found = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside && line == "```" + tag) {
      inside = found = true;
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
    } else if (inside) {
      lines.push_back(line);
    }
  }
  if (!found) throw std::runtime_error("no ```" + tag + " block in docs/architecture.md");
  return lines;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// "name: what it owns" -> "name".
std::string module_name(const std::string& item) {
  return trim(item.substr(0, item.find(':')));
}

std::string names(const std::vector<std::string>& modules) {
  std::string text;
  for (const auto& m : modules)
    text += (text.empty() ? "" : ", ") + m;
  return text.empty() ? "none" : text;
}

}  // namespace

Layering parse_layering(const std::string& markdown) {
  Layering layering;
  int level = 0;
  for (const std::string& line : fenced_block(markdown, "layers")) {
    if (trim(line).empty()) continue;
    for (std::size_t start = 0;;) {
      const std::size_t bar = line.find(" | ", start);
      const std::string name = module_name(line.substr(start, bar - start));
      if (!layering.level.emplace(name, level).second) {
        throw std::runtime_error("module " + name + " appears twice in the layers block");
      }
      if (bar == std::string::npos) break;
      start = bar + 3;
    }
    ++level;
  }
  for (const std::string& line : fenced_block(markdown, "layer-entries")) {
    if (trim(line).empty()) continue;
    layering.entry[module_name(line)] = trim(line.substr(line.find(':') + 1));
  }
  return layering;
}

std::vector<ModuleInclude> scan_module_includes(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  const std::regex include_re(R"(^\s*#\s*include\s+"(sim/([a-z_]+)/[^"]+)\")");
  std::vector<ModuleInclude> includes;
  const auto scan_file = [&](const fs::path& file, const std::string& module) {
    std::ifstream in(file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      std::smatch m;
      if (std::regex_search(line, m, include_re) && m[2] != module) {
        includes.push_back(
            {fs::relative(file, root).generic_string(), number, module, m[2].str(), m[1].str()});
      }
    }
  };
  const auto scan_tree = [&](const fs::path& dir, const std::string& module) {
    if (!fs::is_directory(dir)) return;
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() &&
          (ext == ".h" || ext == ".cpp" || ext == ".cu" || ext == ".cuh"))
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files)
      scan_file(file, module);
  };
  if (fs::is_directory(root / "sim")) {
    std::vector<fs::path> modules;
    for (const auto& entry : fs::directory_iterator(root / "sim"))
      if (entry.is_directory()) modules.push_back(entry.path());
    std::sort(modules.begin(), modules.end());
    for (const auto& dir : modules)
      scan_tree(dir, dir.filename().string());
  }
  for (const char* top : {"python", "validation", "bench"})
    scan_tree(root / top, top);
  return includes;
}

std::vector<std::string> layering_violations(const Layering& layering,
                                             const std::vector<ModuleInclude>& includes) {
  std::vector<std::string> violations;
  const auto below = [&](const std::string& module) {
    std::vector<std::string> allowed;
    for (const auto& [name, level] : layering.level)
      if (level < layering.level.at(module)) allowed.push_back(name);
    return allowed;
  };
  std::map<std::string, std::set<std::string>> graph;
  for (const ModuleInclude& inc : includes) {
    graph[inc.from].insert(inc.to);
    const std::string where = inc.file + ":" + std::to_string(inc.line) + ": ";
    const auto from = layering.level.find(inc.from);
    const auto to = layering.level.find(inc.to);
    if (from == layering.level.end()) {
      violations.push_back(where + "module " + inc.from +
                           " is not in docs/architecture.md's layers");
      continue;
    }
    if (to == layering.level.end()) {
      violations.push_back(where + "includes " + inc.header + ": module " + inc.to +
                           " is not in docs/architecture.md's layers");
      continue;
    }
    if (to->second >= from->second) {
      violations.push_back(where + "includes " + inc.header + ": " + inc.from +
                           " may include only " + names(below(inc.from)));
      continue;
    }
    const auto entry = layering.entry.find(inc.to);
    if (entry != layering.entry.end() && inc.header != entry->second && from->second > to->second) {
      violations.push_back(where + "includes " + inc.header + ": above " + inc.to +
                           ", reach it only through " + entry->second);
    }
  }
  std::sort(violations.begin(), violations.end());
  // Cycles between modules, whatever the order says (a depth-first search over the graph).
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::set<std::string> reported;
  std::function<void(const std::string&)> visit = [&](const std::string& module) {
    state[module] = 1;
    path.push_back(module);
    for (const std::string& next : graph[module]) {
      if (state[next] == 1) {
        auto start = std::find(path.begin(), path.end(), next);
        std::string cycle;
        for (auto it = start; it != path.end(); ++it)
          cycle += *it + " -> ";
        cycle += next;
        if (reported.insert(cycle).second) violations.push_back("cycle: " + cycle);
      } else if (state[next] == 0) {
        visit(next);
      }
    }
    path.pop_back();
    state[module] = 2;
  };
  for (const auto& [module, targets] : graph)
    if (state[module] == 0) visit(module);
  return violations;
}

}  // namespace servesim::test
