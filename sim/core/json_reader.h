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

// The deepest nesting of arrays and objects servesim reads. Real inputs nest a few levels (a
// Hugging Face config.json or a run config 3 or 4, a vLLM result file 2); nlohmann parses
// iteratively, but copying, merging and printing a document recurse once a level, so a bound
// far below what a thread's stack holds keeps a crafted file from crashing the process.
inline constexpr int kMaxJsonDepth = 128;

// Bounds of the rates and times readers turn into integer-nanosecond durations. A bandwidth
// below 1e6 B/s (1 MB/s, slower than any link a server has) or a peak below 1e9 FLOP/s would
// stretch one transfer or iteration past the 2^63 ns an int64 clock holds (a petabyte at 1
// MB/s still takes only 1e9 s). A cost of one step, kernel or hop above an hour is no real
// cost, and the bound keeps sums of many of them inside the clock too.
inline constexpr double kMinBandwidthBytesPerS = 1e6;
inline constexpr double kMinFlopsPerS = 1e9;
inline constexpr double kMaxStepCostS = 3600;

// Parses JSON text strictly: syntax errors name the source, line and column, a key that
// appears twice in one object is an error (nlohmann would silently keep the last one), and so
// is nesting deeper than kMaxJsonDepth (named by the line and column of the bracket too many).
// Every JSON servesim reads from a user goes through here or parse_json_if_json.
nlohmann::json parse_json_text(std::string_view text, const std::string& source_name);

// As parse_json_text, for a value that may also be a bare word (a --set or --grid value such
// as `vllm`): nullopt when `text` is not JSON at all, so the caller can take it as a string.
// JSON that is too deep or repeats a key is still an InputError.
std::optional<nlohmann::json> parse_json_if_json(std::string_view text,
                                                 const std::string& source_name);

// A value for an error message: at most 40 characters of its compact JSON ("[1,2,3,...]"),
// however large or deep it is, without writing out the rest.
std::string json_excerpt(const nlohmann::json& value);
// The same with the value's type first: "number 5", "array [1,2,3,...]".
std::string describe_json(const nlohmann::json& value);

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
  std::optional<double> optional_nonnegative_number(std::string_view key);
  // A number in the half-open interval (0, 1]: an efficiency or a utilisation.
  double fraction(std::string_view key);
  std::optional<double> optional_fraction(std::string_view key);
  std::int64_t positive_integer(std::string_view key);
  std::optional<std::int64_t> optional_positive_integer(std::string_view key);
  std::optional<std::int64_t> optional_nonnegative_integer(std::string_view key);
  std::optional<bool> optional_boolean(std::string_view key);
  // A rate that divides a size into a duration (a bandwidth, a peak): a number of at least
  // `minimum`, which `unit` names in the error ("B/s").
  double rate(std::string_view key, double minimum, std::string_view unit);
  std::optional<double> optional_rate(std::string_view key, double minimum, std::string_view unit);
  // A time in seconds in [0, max_s], bounded so that it fits integer nanoseconds.
  std::optional<double> optional_seconds(std::string_view key, double max_s);

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
