#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "sim/core/json_reader.h"
#include "sim/workload/workload_spec.h"

// What the readers of a workload spec's objects share (workload_spec_parser.cpp reads the
// document, arrival_spec_parser.cpp its arrival object).
namespace servesim {

template <typename Kind, std::size_t N>
Kind read_choice(JsonObjectReader& r, std::string_view key,
                 const std::array<std::pair<std::string_view, Kind>, N>& names) {
  const std::string value = r.string(key);
  std::string valid;
  for (const auto& [name, kind] : names) {
    if (name == value) return kind;
    valid += (valid.empty() ? "" : ", ") + std::string(name);
  }
  r.fail(key, "unknown value \"" + value + "\"; valid values are " + valid);
}

// A key of the schema that the chosen kind does not use ("cv" with poisson) is refused with
// a message naming the kind; the generic unknown-key check would only list the known keys.
void refuse_unused(const JsonObjectReader& r, std::span<const std::string_view> all_keys,
                   std::initializer_list<std::string_view> used_keys, const std::string& kind);

// The "arrival" object: its process and the keys that process reads.
ArrivalSpec parse_arrival(JsonObjectReader r);

}  // namespace servesim
