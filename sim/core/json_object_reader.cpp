#include "sim/core/json_reader.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.h"

namespace servesim {

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string source_name,
                                   std::string key_prefix)
    : object_(object), source_name_(std::move(source_name)), key_prefix_(std::move(key_prefix)) {
  if (!object_.is_object()) {
    const std::string what = key_prefix_.empty() ? "document" : "field \"" + key_prefix_ + "\"";
    throw InputError(source_name_,
                     what + ": expected a JSON object, got " + describe_json(object_));
  }
}

std::string JsonObjectReader::key_path(std::string_view key) const {
  return key_prefix_.empty() ? std::string(key) : key_prefix_ + "." + std::string(key);
}

void JsonObjectReader::fail(std::string_view key, const std::string& message) const {
  throw InputError(source_name_, "field \"" + key_path(key) + "\": " + message);
}

bool JsonObjectReader::has(std::string_view key) const {
  const auto it = object_.find(std::string(key));
  return it != object_.end() && !it->is_null();
}

const nlohmann::json* JsonObjectReader::find(std::string_view key) {
  known_keys_.emplace(key);
  const auto it = object_.find(std::string(key));
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

const nlohmann::json& JsonObjectReader::require(std::string_view key) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) fail(key, "required but missing");
  return *value;
}

double JsonObjectReader::to_number(std::string_view key, const nlohmann::json& value) const {
  if (!value.is_number()) fail(key, "expected a number, got " + describe_json(value));
  const double number = value.get<double>();
  if (!std::isfinite(number)) fail(key, "expected a finite number");
  return number;
}

std::int64_t JsonObjectReader::to_integer(std::string_view key, const nlohmann::json& value) const {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > (std::uint64_t{1} << 62)) {
      fail(key, "integer too large");
    }
    return value.get<std::int64_t>();
  }
  const double number = to_number(key, value);
  if (std::floor(number) != number) fail(key, "expected an integer, got " + describe_json(value));
  if (std::fabs(number) > 4.0e18) fail(key, "integer too large");
  return static_cast<std::int64_t>(number);
}

std::string JsonObjectReader::string(std::string_view key) {
  const auto& value = require(key);
  if (!value.is_string()) fail(key, "expected a string, got " + describe_json(value));
  return value.get<std::string>();
}

std::optional<std::string> JsonObjectReader::optional_string(std::string_view key) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  return string(key);
}

double JsonObjectReader::number(std::string_view key) {
  return to_number(key, require(key));
}

double JsonObjectReader::positive_number(std::string_view key) {
  const double value = number(key);
  if (value <= 0) fail(key, "expected a positive number, got " + describe_json(require(key)));
  return value;
}

std::optional<double> JsonObjectReader::optional_number(std::string_view key) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  return number(key);
}

std::optional<double> JsonObjectReader::optional_positive_number(std::string_view key) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  return positive_number(key);
}

std::optional<double> JsonObjectReader::optional_nonnegative_number(std::string_view key) {
  const std::optional<double> value = optional_number(key);
  if (value && *value < 0) fail(key, "expected a number of at least 0");
  return value;
}

double JsonObjectReader::fraction(std::string_view key) {
  const double value = number(key);
  if (!(value > 0 && value <= 1)) {
    fail(key, "expected a fraction in (0, 1], got " + describe_json(require(key)));
  }
  return value;
}

std::optional<double> JsonObjectReader::optional_fraction(std::string_view key) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  return fraction(key);
}

std::int64_t JsonObjectReader::positive_integer(std::string_view key) {
  const std::int64_t value = to_integer(key, require(key));
  if (value <= 0) fail(key, "expected a positive integer, got " + describe_json(require(key)));
  return value;
}

std::optional<std::int64_t> JsonObjectReader::optional_positive_integer(std::string_view key) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  return positive_integer(key);
}

std::optional<std::int64_t> JsonObjectReader::optional_nonnegative_integer(std::string_view key) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  const std::int64_t value = to_integer(key, require(key));
  if (value < 0) fail(key, "expected a non-negative integer, got " + describe_json(require(key)));
  return value;
}

std::optional<bool> JsonObjectReader::optional_boolean(std::string_view key) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) fail(key, "expected true or false, got " + describe_json(*value));
  return value->get<bool>();
}

double JsonObjectReader::rate(std::string_view key, double minimum, std::string_view unit) {
  const double value = number(key);
  if (!(value >= minimum)) {
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", minimum);
    fail(key, "expected at least " + std::string(bound) + " " + std::string(unit) +
                  " (a slower rate stretches durations past the integer-nanosecond clock), got " +
                  describe_json(require(key)));
  }
  return value;
}

std::optional<double> JsonObjectReader::optional_rate(std::string_view key, double minimum,
                                                      std::string_view unit) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  return rate(key, minimum, unit);
}

std::optional<double> JsonObjectReader::optional_seconds(std::string_view key, double max_s) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  const double value = number(key);
  if (!(value >= 0 && value <= max_s)) {
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", max_s);
    fail(key, "expected a time in [0, " + std::string(bound) + "] s, got " +
                  describe_json(require(key)));
  }
  return value;
}

JsonObjectReader JsonObjectReader::object(std::string_view key) {
  const auto& value = require(key);
  if (!value.is_object()) fail(key, "expected a JSON object, got " + describe_json(value));
  return JsonObjectReader(value, source_name_, key_path(key));
}

std::optional<JsonObjectReader> JsonObjectReader::optional_object(std::string_view key) {
  if (!has(key)) {
    ignore(key);
    return std::nullopt;
  }
  return object(key);
}

const nlohmann::json* JsonObjectReader::optional_raw(std::string_view key) {
  return find(key);
}

void JsonObjectReader::ignore(std::string_view key) {
  known_keys_.emplace(key);
}

std::vector<std::string> JsonObjectReader::unknown_keys() const {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : object_.items()) {
    if (known_keys_.find(key) == known_keys_.end()) unknown.push_back(key);
  }
  return unknown;
}

void JsonObjectReader::reject_unknown_keys() const {
  const auto unknown = unknown_keys();
  if (unknown.empty()) return;
  std::string known;
  for (const auto& name : known_keys_)
    known += (known.empty() ? "" : ", ") + name;
  fail(unknown.front(), "unknown key (known keys: " + known + ")");
}

}  // namespace servesim
