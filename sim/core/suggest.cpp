#include "sim/core/suggest.h"

#include <algorithm>
#include <cctype>

namespace servesim {
namespace {

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

// Optimal string alignment distance: Levenshtein plus transposition of adjacent characters.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

constexpr std::size_t kMostSuggestions = 3;

}  // namespace

std::vector<std::string> close_names(std::string_view given,
                                     const std::vector<std::string>& candidates) {
  const std::string wanted = lower(given);
  if (wanted.empty()) return {};
  std::vector<std::string> prefixed;
  for (const auto& candidate : candidates) {
    const std::string name = lower(candidate);
    if (name == wanted) return {};
    if (wanted.size() >= 2 && name.rfind(wanted, 0) == 0) prefixed.push_back(candidate);
  }
  if (!prefixed.empty()) {
    if (prefixed.size() > kMostSuggestions) prefixed.resize(kMostSuggestions);
    return prefixed;
  }
  std::size_t best = std::max<std::size_t>(1, wanted.size() / 3);  // the farthest allowed
  std::vector<std::string> closest;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(wanted, lower(candidate));
    if (distance > best) continue;
    if (distance < best) {
      best = distance;
      closest.clear();
    }
    if (distance == best && closest.size() < kMostSuggestions) closest.push_back(candidate);
  }
  return closest;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates,
                         std::string_view before, std::string_view after) {
  const auto names = close_names(given, candidates);
  if (names.empty()) return {};
  std::string text = "did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ");
    text += std::string(before) + names[i] + std::string(after);
  }
  return text + "?";
}

std::vector<std::string> split_name_list(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const std::size_t comma = list.find(", ");
    names.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 2);
  }
  return names;
}

}  // namespace servesim
