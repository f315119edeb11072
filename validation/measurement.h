#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "sim/calibration/measurement.h"
#include "sim/hardware/batch_shape.h"
#include "validation/harness_options.h"
#include "validation/shapes.h"

namespace servesim::validation {

// The harness writes the simulator's own measurement records (sim/calibration/measurement.h,
// docs/measurements.md), so the format `servesim calibrate` and `servesim validate` read is
// defined in one place. A GEMM or attention record is one kernel call of one layer of one TP
// shard.
using servesim::Measurement;
using servesim::MeasurementKind;

// A whole iteration replayed with real kernels ("iteration").
struct IterationRecord {
  std::int64_t pp = 1;
  BatchShape shape;
  double predicted_s = 0.0;  // the simulator's duration from iterations.csv
};

// Bytes moved per second. Throws std::invalid_argument unless elapsed_s is positive, so a
// broken timer cannot produce an infinite bandwidth in the output.
double achieved_bandwidth_bytes_per_s(std::uint64_t bytes_moved, double elapsed_s);

// A copy of size_bytes reads and writes size_bytes each, so bandwidth counts 2 x size_bytes:
// the same convention as the datasheet figure it is compared against. `kind` is MemcpyD2D or
// CopyKernelD2D.
Measurement make_copy_measurement(std::string device_name, MeasurementKind kind,
                                  std::uint64_t size_bytes, std::span<const double> samples_s);
// The same by the kind's name, "memcpy_d2d" or "copy_kernel_d2d" (std::invalid_argument
// otherwise).
Measurement make_copy_measurement(std::string device_name, std::string_view kind_name,
                                  std::uint64_t size_bytes, std::span<const double> samples_s);

// The timing statistics of `samples_s` (median, min, max, repeats) around a record; the
// operator kind follows from the record. A GEMM with fp8 operands is an FP8 record: dtype and
// activation_dtype fp8, output_dtype its 16-bit format, kernel cuBLASLt's on tensor cores.
// Throws std::invalid_argument on no samples.
Measurement make_measurement(std::string device_name, const GemmShape& gemm,
                             std::span<const double> samples_s);
Measurement make_measurement(std::string device_name, const DecodeAttentionShape& attention,
                             std::span<const double> samples_s);
Measurement make_measurement(std::string device_name, const PrefillAttentionShape& attention,
                             std::span<const double> samples_s);
Measurement make_measurement(std::string device_name, const IterationRecord& iteration,
                             std::span<const double> samples_s);

// Says how `m` was timed (`timing`: per_call, stream or graph) and, timed back to back, how many
// calls each sample averaged (`calls_per_sample`; README.md, "Timing").
void set_timing(Measurement& m, TimingMode mode, int calls_per_sample);

// Writes {"format": "servesim-measurements", "version": 1, "device": ..., "measurements": [...]}
// with the simulator's writer (servesim::write_measurements_json).
void write_measurements_json(std::ostream& out, std::string_view device_name,
                             std::span<const Measurement> measurements);

}  // namespace servesim::validation
