#include "sim/config/catalog.h"

#include <algorithm>
#include <cctype>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/core/suggest.h"

#ifndef SERVESIM_SOURCE_DIR
#define SERVESIM_SOURCE_DIR "."
#endif

namespace servesim {
namespace {

std::string to_lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// "org/name": one '/' between two non-empty parts, neither "." nor "..", and no file
// extension of the catalog's own (a missing "dir/x.json" stays a missing file).
bool looks_like_hf_id(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string_view::npos) {
    return false;
  }
  const std::string_view org = text.substr(0, slash);
  if (org == "." || org == "..") return false;
  const std::string lower = to_lower(text);
  for (const std::string_view suffix : {".json", ".jsonl", ".csv"}) {
    if (lower.size() > suffix.size() &&
        lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

Catalog::Catalog(std::filesystem::path directory, std::string kind, std::string flag)
    : directory_(std::move(directory)), kind_(std::move(kind)), flag_(std::move(flag)) {}

std::filesystem::path Catalog::resolve(std::string_view name_or_path) const {
  const std::string text(name_or_path);
  if (text.empty()) throw UsageError(flag_ + ": expected a " + kind_ + " name or a file path");
  const auto ends_with = [&text](std::string_view suffix) {
    return text.size() > suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool is_path = text.find('/') != std::string::npos || ends_with(".json") ||
                       ends_with(".jsonl") || ends_with(".csv");
  if (is_path) {
    std::error_code ec;
    if (!std::filesystem::exists(text, ec)) {
      std::string also;
      if (looks_like_hf_id(text)) {
        if (auto entry = find_by_hf_id(text)) return *entry;
        also = "; no shipped " + kind_ + " has this Hugging Face id (\"_name_or_path\")";
      }
      throw InputError(
          text, (ec ? ec.message() : std::string("file not found")) + " (" + flag_ + ")" + also);
    }
    return text;
  }
  const std::string wanted = to_lower(text);
  for (const auto& name : names()) {
    if (to_lower(name) == wanted) return directory_ / (name + ".json");
  }
  const std::vector<std::string> shipped = names();
  std::string known;
  for (const auto& name : shipped)
    known += (known.empty() ? "" : ", ") + name;
  const std::string hint = did_you_mean(text, shipped);
  throw InputError(
      flag_, "unknown " + kind_ + " \"" + text +
                 "\" (known: " + (known.empty() ? "none found in " + directory_.string() : known) +
                 "; or give a path to a .json file)" + (hint.empty() ? "" : "; " + hint));
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> result;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      result.push_back(entry.path().stem().string());
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::optional<std::filesystem::path> Catalog::find_by_hf_id(std::string_view hf_id) const {
  const std::string wanted = to_lower(hf_id);
  for (const auto& name : names()) {
    const std::filesystem::path path = directory_ / (name + ".json");
    const nlohmann::json entry = read_json_file(path);
    const auto it = entry.is_object() ? entry.find("_name_or_path") : entry.end();
    if (it != entry.end() && it->is_string() && to_lower(it->get<std::string>()) == wanted) {
      return path;
    }
  }
  return std::nullopt;
}

std::filesystem::path locate_data_root(const char* environment_value,
                                       const std::filesystem::path& executable) {
  if (environment_value != nullptr && *environment_value != '\0') return environment_value;
  std::error_code ec;
  const auto installed = executable.parent_path() / ".." / "share" / "servesim";
  if (std::filesystem::is_directory(installed / "models", ec)) return installed;
  return SERVESIM_SOURCE_DIR;
}

}  // namespace servesim
