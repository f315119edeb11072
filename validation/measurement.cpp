#include "validation/measurement.h"

#include <ostream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "validation/timing_stats.h"

namespace servesim::validation {

double achieved_bandwidth_bytes_per_s(std::uint64_t bytes_moved, double elapsed_s) {
  if (!(elapsed_s > 0.0)) {
    throw std::invalid_argument("achieved_bandwidth_bytes_per_s: elapsed time must be > 0");
  }
  return static_cast<double>(bytes_moved) / elapsed_s;
}

Measurement make_copy_measurement(std::string device_name, std::string operator_kind,
                                  std::uint64_t size_bytes, std::span<const double> samples_s) {
  const TimingStats stats = compute_timing_stats(samples_s);
  return Measurement{std::move(device_name),
                     std::move(operator_kind),
                     size_bytes,
                     static_cast<int>(samples_s.size()),
                     stats.median_s,
                     stats.min_s,
                     stats.max_s,
                     achieved_bandwidth_bytes_per_s(2 * size_bytes, stats.median_s)};
}

void write_measurements_json(std::ostream& out, std::string_view device_name,
                             std::span<const Measurement> measurements) {
  nlohmann::json list = nlohmann::json::array();
  for (const Measurement& m : measurements) {
    list.push_back({{"device_name", m.device_name},
                    {"operator_kind", m.operator_kind},
                    {"size_bytes", m.size_bytes},
                    {"repeats", m.repeats},
                    {"median_s", m.median_s},
                    {"min_s", m.min_s},
                    {"max_s", m.max_s},
                    {"bandwidth_bytes_per_s", m.bandwidth_bytes_per_s}});
  }
  const nlohmann::json doc = {{"format", "servesim-measurements"},
                              {"version", 1},
                              {"device", device_name},
                              {"measurements", std::move(list)}};
  out << doc.dump(2) << '\n';
}

}  // namespace servesim::validation
