#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "sim/hardware/batch_shape.h"
#include "validation/shapes.h"

namespace servesim::validation {

// A device-to-device copy ("memcpy_d2d", "copy_kernel_d2d").
struct CopyRecord {
  std::uint64_t size_bytes = 0;
  double bandwidth_bytes_per_s = 0.0;  // from the median, SI decimal
};

// A whole iteration replayed with real kernels ("iteration").
struct IterationRecord {
  std::int64_t pp = 1;
  BatchShape shape;
  double predicted_s = 0.0;  // the simulator's duration from iterations.csv
};

// One measured operator at one shape on one device: the unit that calibration of the
// simulator's hardware profiles consumes. The record variant fixes the operator kind's
// shape fields; a GEMM or attention record is one kernel call of one layer of one TP shard.
struct Measurement {
  std::string device_name;
  std::string operator_kind;  // "gemm", "decode_attention", "prefill_attention", "iteration",
                              // "memcpy_d2d", "copy_kernel_d2d"
  int repeats = 0;
  double median_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
  std::string model;    // written when not empty
  std::int64_t tp = 0;  // written when positive
  std::variant<CopyRecord, GemmShape, DecodeAttentionShape, PrefillAttentionShape, IterationRecord>
      record;
};

// Bytes moved per second. Throws std::invalid_argument unless elapsed_s is positive, so a
// broken timer cannot produce an infinite bandwidth in the output.
double achieved_bandwidth_bytes_per_s(std::uint64_t bytes_moved, double elapsed_s);

// A copy of size_bytes reads and writes size_bytes each, so bandwidth counts 2 x size_bytes:
// the same convention as the datasheet figure it is compared against.
Measurement make_copy_measurement(std::string device_name, std::string operator_kind,
                                  std::uint64_t size_bytes, std::span<const double> samples_s);

// The timing statistics of `samples_s` (median, min, max, repeats) around a record; the
// operator kind follows from the record. Throws std::invalid_argument on no samples.
Measurement make_measurement(std::string device_name, GemmShape gemm,
                             std::span<const double> samples_s);
Measurement make_measurement(std::string device_name, DecodeAttentionShape attention,
                             std::span<const double> samples_s);
Measurement make_measurement(std::string device_name, PrefillAttentionShape attention,
                             std::span<const double> samples_s);
Measurement make_measurement(std::string device_name, IterationRecord iteration,
                             std::span<const double> samples_s);

// Writes {"format": "servesim-measurements", "version": 1, "device": ..., "measurements": [...]}
// with each record's fields as listed in validation/README.md.
void write_measurements_json(std::ostream& out, std::string_view device_name,
                             std::span<const Measurement> measurements);

}  // namespace servesim::validation
