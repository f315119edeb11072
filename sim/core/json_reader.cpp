#include "sim/core/json_reader.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::string line_and_column(std::string_view text, std::size_t byte_position) {
  std::size_t line = 1;
  std::size_t column = 1;
  const std::size_t end = std::min(byte_position > 0 ? byte_position - 1 : 0, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Byte offset of the first token outside string literals for which `match(is_key, token)` is
// true, or npos. A key is a string literal followed by ':'; other tokens are bare words
// (numbers, true, false, null). Used to place errors nlohmann reports without a position.
template <typename Match>
std::size_t find_token(std::string_view text, Match match) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '"') {
      std::size_t end = i + 1;
      while (end < text.size() && text[end] != '"')
        end += text[end] == '\\' ? 2 : 1;
      const std::size_t after = text.find_first_not_of(" \t\r\n", end + 1);
      if (after != std::string_view::npos && text[after] == ':' &&
          match(true, text.substr(i, end + 1 - i))) {
        return i;
      }
      i = end + 1;
    } else if (text[i] == '-' || (text[i] >= '0' && text[i] <= '9')) {
      const std::size_t end = std::min(text.find_first_of(" \t\r\n,]}:", i), text.size());
      if (match(false, text.substr(i, end - i))) return i;
      i = end;
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

// " at line L, column C" of a token offset, or nothing when the token was not found.
std::string at_offset(std::string_view text, std::size_t offset) {
  if (offset == std::string_view::npos) return "";
  return " at " + line_and_column(text, offset + 1);
}

// Appends `value` in compact JSON form to `out` until `out` holds `limit` characters: the
// first `limit` characters of value.dump(), without dumping the rest. It recurses once a
// level, and each level writes a bracket, so it stops within `limit` levels however deep the
// value is.
void append_bounded(const nlohmann::json& value, std::string& out, std::size_t limit) {
  if (out.size() >= limit) return;
  const auto dump = [](const nlohmann::json& v) {
    return v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  };
  if (value.is_object() || value.is_array()) {
    out += value.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out.size() < limit; ++it) {
      if (!first) out += ',';
      first = false;
      if (value.is_object()) out += dump(nlohmann::json(it.key().substr(0, limit))) + ':';
      append_bounded(*it, out, limit);
    }
    if (out.size() < limit) out += value.is_object() ? '}' : ']';
  } else if (value.is_string()) {
    // A prefix of the string escapes to a prefix of the escaped string.
    out += dump(nlohmann::json(value.get_ref<const std::string&>().substr(0, limit)));
  } else {
    out += dump(value);
  }
}

// Byte offset of the bracket that first opens nesting level `level`, outside string
// literals, or npos. Exact on text that is valid JSON up to that bracket, which the parser
// has checked when it reports the depth.
std::size_t find_nesting(std::string_view text, int level) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '[' || c == '{') {
      if (++depth == level) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

// Thrown by the parser callback at the bracket one level too deep.
struct TooDeep {};

// parse_json_text, or with `bare_word_ok` nullopt for text that is not JSON.
std::optional<nlohmann::json> parse_checked(std::string_view text, const std::string& source_name,
                                            bool bare_word_ok) {
  // One set of keys per open object; a repeated key is refused at the moment it is seen.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate_key;
  std::size_t keys_seen = 0;
  std::size_t duplicate_ordinal = 0;  // the duplicate is the n-th key of the text
  const auto on_event = [&](int depth, nlohmann::json::parse_event_t event,
                            nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    // `depth` counts the containers around the one that starts.
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth) {
      throw TooDeep{};
    }
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end && !open_objects.empty()) {
      open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty() && duplicate_key.empty()) {
      const auto key = parsed.get<std::string>();
      if (!open_objects.back().insert(key).second) {
        duplicate_key = key;
        duplicate_ordinal = keys_seen;
      }
      ++keys_seen;
    }
    return true;
  };
  nlohmann::json document;
  try {
    // A bare word is refused without an exception (the workload sniffer tries every file).
    document = nlohmann::json::parse(text.begin(), text.end(), on_event, !bare_word_ok);
    if (document.is_discarded()) return std::nullopt;
  } catch (const TooDeep&) {
    throw InputError(source_name, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                      " levels" +
                                      at_offset(text, find_nesting(text, kMaxJsonDepth + 1)));
  } catch (const nlohmann::json::parse_error& error) {
    if (bare_word_ok) return std::nullopt;
    // "[json.exception.parse_error.101] parse error at line 1, column 17: <reason>": keep the
    // reason, and replace the bytes of the input it quotes that may not be printable text.
    std::string reason = error.what();
    if (const auto colon = reason.find(": ", reason.find("column")); colon != std::string::npos) {
      reason = reason.substr(colon + 2);
    }
    for (char& c : reason) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    throw InputError(source_name,
                     "malformed JSON at " + line_and_column(text, error.byte) + ": " + reason);
  } catch (const nlohmann::json::exception& error) {
    if (bare_word_ok) return std::nullopt;
    // Numbers beyond the range of a double ("number overflow parsing '1e999'"), and other
    // value errors, which nlohmann reports without a position: find the token.
    std::string reason = error.what();
    if (const auto bracket = reason.find("] "); bracket != std::string::npos) {
      reason = reason.substr(bracket + 2);
    }
    std::size_t offset = std::string_view::npos;
    if (const auto open = reason.find('\''), close = reason.rfind('\'');
        open != std::string::npos && close > open + 1) {
      const std::string token = reason.substr(open + 1, close - open - 1);
      offset =
          find_token(text, [&](bool is_key, std::string_view t) { return !is_key && t == token; });
    }
    throw InputError(source_name, "invalid JSON" + at_offset(text, offset) + ": " + reason);
  }
  if (!duplicate_key.empty()) {
    std::size_t keys = 0;
    const std::size_t offset = find_token(
        text, [&](bool is_key, std::string_view) { return is_key && keys++ == duplicate_ordinal; });
    throw InputError(source_name, "key \"" + duplicate_key + "\" appears twice in one object" +
                                      (offset == std::string_view::npos ? "" : ",") +
                                      at_offset(text, offset));
  }
  return document;
}

}  // namespace

std::string json_excerpt(const nlohmann::json& value) {
  constexpr std::size_t kShown = 40;
  std::string shown;
  append_bounded(value, shown, kShown + 1);
  if (shown.size() > kShown) shown = shown.substr(0, kShown - 3) + "...";
  return shown;
}

std::string describe_json(const nlohmann::json& value) {
  return std::string(value.type_name()) + " " + json_excerpt(value);
}

nlohmann::json parse_json_text(std::string_view text, const std::string& source_name) {
  return *parse_checked(text, source_name, false);
}

std::optional<nlohmann::json> parse_json_if_json(std::string_view text,
                                                 const std::string& source_name) {
  return parse_checked(text, source_name, true);
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(name, "file not found");
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(name, "not a regular file (expected a JSON file)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(name, "cannot open file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(name, "read error");
  const std::string text = buffer.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError(name, "file is empty (expected a JSON object)");
  }
  return parse_json_text(text, name);
}

namespace {

void collect_numeric_paths(const nlohmann::json& node, const std::string& prefix,
                           std::string_view skip, std::vector<std::string>& out) {
  for (const auto& [key, value] : node.items()) {
    if (prefix.empty() && key == skip) continue;
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) collect_numeric_paths(value, path, skip, out);
    if (value.is_number()) out.push_back(path);
  }
}

}  // namespace

std::vector<std::string> numeric_key_paths(const nlohmann::json& document, std::string_view skip) {
  std::vector<std::string> paths;
  collect_numeric_paths(document, "", skip, paths);
  return paths;
}

}  // namespace servesim
