#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// Parses JSON text strictly: syntax errors name the source, line and column, and a key that
// appears twice in one object is an error (nlohmann would silently keep the last one).
nlohmann::json parse_json_text(std::string_view text, const std::string& source_name);

// Reads and parses a JSON file; a missing, unreadable or non-regular file is an InputError.
nlohmann::json read_json_file(const std::filesystem::path& path);

// The dotted key paths of every number in a document ("efficiency.gpu_link"), skipping the
// top-level key `skip` (e.g. a metadata section).
std::vector<std::string> numeric_key_paths(const nlohmann::json& document, std::string_view skip);

// Typed access to one JSON object with errors that name the source and the key path.
// Every accessor marks its key as known; reject_unknown_keys() then refuses the rest, so a
// misspelt key is reported instead of silently ignored.
class JsonObjectReader {
 public:
  // `object` must outlive the reader. `key_prefix` is the dotted path of this object in its
  // document ("" for the root).
  JsonObjectReader(const nlohmann::json& object, std::string source_name,
                   std::string key_prefix = "");

  bool has(std::string_view key) const;
  const std::string& source_name() const { return source_name_; }
  std::string key_path(std::string_view key) const;

  std::string string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);

  // Finite numbers. positive_* refuse zero and negatives; integers refuse fractions.
  double number(std::string_view key);
  double positive_number(std::string_view key);
  std::optional<double> optional_number(std::string_view key);
  std::optional<double> optional_positive_number(std::string_view key);
  // A number in the half-open interval (0, 1]: an efficiency or a utilisation.
  double fraction(std::string_view key);
  std::optional<double> optional_fraction(std::string_view key);
  std::int64_t positive_integer(std::string_view key);
  std::optional<std::int64_t> optional_positive_integer(std::string_view key);
  std::optional<std::int64_t> optional_nonnegative_integer(std::string_view key);
  std::optional<bool> optional_boolean(std::string_view key);

  JsonObjectReader object(std::string_view key);
  std::optional<JsonObjectReader> optional_object(std::string_view key);
  // The raw value, for lists and free-form fields; marks the key known.
  const nlohmann::json* optional_raw(std::string_view key);

  // Marks keys as known without reading them (metadata the caller does not use).
  void ignore(std::string_view key);
  // The keys of the object no accessor has read, in the object's order.
  std::vector<std::string> unknown_keys() const;
  void reject_unknown_keys() const;

  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

 private:
  const nlohmann::json* find(std::string_view key);
  const nlohmann::json& require(std::string_view key);
  double to_number(std::string_view key, const nlohmann::json& value) const;
  std::int64_t to_integer(std::string_view key, const nlohmann::json& value) const;

  const nlohmann::json& object_;
  std::string source_name_;
  std::string key_prefix_;
  std::set<std::string, std::less<>> known_keys_;
};

}  // namespace servesim
