#include "sim/config/overrides.h"

#include "sim/core/error.h"
#include "sim/core/json_reader.h"

namespace servesim {

void set_path(nlohmann::json& document, std::string_view path, nlohmann::json value,
              const std::string& origin) {
  if (path.empty()) throw UsageError(origin + ": empty key path");
  nlohmann::json* node = &document;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    const std::string key(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (key.empty())
      throw UsageError(origin + ": malformed key path \"" + std::string(path) + "\"");
    if (!node->is_object()) {
      if (!node->is_null()) {
        throw UsageError(origin + ": \"" + std::string(path.substr(0, start - 1)) +
                         "\" is not an object, so it has no key \"" + key + "\"");
      }
      *node = nlohmann::json::object();
    }
    if (dot == std::string_view::npos) {
      (*node)[key] = std::move(value);
      return;
    }
    node = &(*node)[key];
    start = dot + 1;
  }
}

void apply_override(nlohmann::json& document, std::string_view assignment,
                    const std::string& origin) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos) {
    throw UsageError(origin + ": expected KEY=VALUE, got \"" + std::string(assignment) + "\"");
  }
  const std::string_view path = assignment.substr(0, equals);
  const std::string text(assignment.substr(equals + 1));
  std::optional<nlohmann::json> value = parse_json_if_json(text, origin);
  set_path(document, path, value ? std::move(*value) : nlohmann::json(text), origin);
}

void deep_merge(nlohmann::json& base, const nlohmann::json& patch) {
  if (!patch.is_object() || !base.is_object()) {
    base = patch;
    return;
  }
  for (const auto& [key, value] : patch.items()) {
    if (value.is_object() && base.contains(key) && base[key].is_object()) {
      deep_merge(base[key], value);
    } else {
      base[key] = value;
    }
  }
}

}  // namespace servesim
