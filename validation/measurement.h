#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

namespace servesim::validation {

// One measured operator at one size on one device: the unit that calibration of the
// simulator's hardware profiles consumes. Later operator kinds (GEMM, attention) extend
// this record; "operator_kind" tells a reader which fields to expect.
struct Measurement {
  std::string device_name;
  std::string operator_kind;  // "memcpy_d2d", "copy_kernel_d2d", ...
  std::uint64_t size_bytes = 0;
  int repeats = 0;
  double median_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
  double bandwidth_bytes_per_s = 0.0;  // from the median, SI decimal
};

// Bytes moved per second. Throws std::invalid_argument unless elapsed_s is positive, so a
// broken timer cannot produce an infinite bandwidth in the output.
double achieved_bandwidth_bytes_per_s(std::uint64_t bytes_moved, double elapsed_s);

// A copy of size_bytes reads and writes size_bytes each, so bandwidth counts 2 x size_bytes:
// the same convention as the datasheet figure it is compared against.
Measurement make_copy_measurement(std::string device_name, std::string operator_kind,
                                  std::uint64_t size_bytes, std::span<const double> samples_s);

// Writes {"format": "servesim-measurements", "version": 1, "device": ..., "measurements": [...]}.
void write_measurements_json(std::ostream& out, std::string_view device_name,
                             std::span<const Measurement> measurements);

}  // namespace servesim::validation
