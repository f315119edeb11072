#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/hardware/batch_shape.h"
#include "sim/model/dtype.h"

namespace servesim {

// What a measured record timed. Every record but `Iteration` and `HostOverhead` is one
// kernel (or one collective, one copy) on one GPU: a GEMM record is one matrix multiply of
// one layer of one tensor-parallel shard, not a whole forward pass.
enum class MeasurementKind {
  Gemm,              // one [m x k] x [k x n] matrix multiply
  DecodeAttention,   // one attention kernel over `batch` sequences decoding one token each
  PrefillAttention,  // one attention kernel over `batch` chunks of `chunk_tokens` tokens
  MemcpyD2D,         // cudaMemcpy device to device of size_bytes
  CopyKernelD2D,     // a copy kernel moving size_bytes
  AllReduce,         // one all-reduce of size_bytes over `ranks` GPUs
  Iteration,         // one whole forward pass of a replica: BatchShape fields
  HostOverhead,      // host work of one engine iteration (schedule, prepare, sample, output)
  MoeGemm,           // one grouped GEMM over the experts a step's tokens were routed to
};
std::string_view measurement_kind_name(MeasurementKind kind) noexcept;

// One record of a servesim-measurements file (docs/measurements.md). Fields that do not
// belong to the record's kind keep their defaults.
struct Measurement {
  MeasurementKind kind = MeasurementKind::Gemm;
  std::string where;   // file and record ("f.json: measurements[3]", "mlp.csv:12") for errors
  std::string source;  // file it was read from
  std::string device_name;
  std::int64_t repeats = 1;
  double median_s = 0;
  std::optional<double> min_s;
  std::optional<double> max_s;
  std::string model;  // for leave-one-model-out; empty when unknown
  std::int64_t tp = 1;
  // How a kernel record was timed (validation/README.md, "Timing"): "per_call" (one call between
  // CUDA events, the launch and the library's host work included), "stream" or "graph"
  // (back-to-back launches on a stream or in a CUDA graph, each sample the mean of
  // calls_per_sample launches); empty: not stated (files written before the field, vidur's).
  std::string timing;
  std::int64_t calls_per_sample = 0;  // stream, graph: launches averaged by each sample
  std::string gemm_operator;          // gemm: qkv, o, mlp_up, mlp_down, lm_head or empty
  DType dtype = DType::FP16;
  // gemm (and moe_gemm: n, k); a harness quant-gemm record also gives its activations' format,
  // the int4 scales' group (0: none) and the kernel that ran (validation/README.md, "Output")
  std::int64_t m = 0, n = 0, k = 0;
  std::optional<DType> activation_dtype;
  std::optional<DType> output_dtype;
  std::int64_t group_size = 0;
  struct Kernel {
    std::string name;
    std::string kind;               // "gemv", "grouped", ... (empty: not given)
    std::string cores;              // "cuda" or "tensor"
    double tile_m = 0, tile_n = 0;  // 0: not given
  };
  std::optional<Kernel> kernel;
  // moe_gemm: `tokens` routed top_k over `experts`; what the seeded routing gave: the experts
  // with a token, the rows routed (tokens x top_k) and the rows computed (each touched expert's
  // padded to the kernel's tile)
  std::int64_t tokens = 0, top_k = 0, experts = 0;
  std::int64_t experts_touched = 0, routed_rows = 0, padded_rows = 0;
  std::optional<std::int64_t> seed;
  // attention: batch sequences; each decode sequence has context_tokens of KV; each prefill
  // chunk of chunk_tokens follows context_tokens already cached.
  std::int64_t batch = 1, context_tokens = 0, chunk_tokens = 0;
  std::int64_t num_heads = 0, num_kv_heads = 0, head_dim = 0, block_size = 0;
  // copies and collectives
  double size_bytes = 0;
  std::optional<double> bandwidth_bytes_per_s;
  std::int64_t ranks = 0;
  // iteration
  std::int64_t pp = 1;
  BatchShape shape;
  std::optional<double> predicted_s;

  // The class it is reported under: "gemm.qkv", "decode_attention", ...; GEMMs whose weights
  // are not 16 or 32 bits add their format: "gemm.mlp_up.int4", "moe_gemm.mlp_down.fp8"; records
  // timed back to back add their timing, so they are never pooled with per-call ones:
  // "gemm.qkv.graph", "gemm.o.stream".
  std::string class_name() const;
};

// The kinds' JSON names, for error messages and docs.
std::string_view measurement_kind_list() noexcept;

// Reads {"format": "servesim-measurements", "version": 1, "device": ..., "measurements":
// [...]}. Every error names the file and the record (measurements[i]) and the field.
std::vector<Measurement> read_measurements_file(const std::filesystem::path& path);
std::vector<Measurement> measurements_from_json(const nlohmann::json& document,
                                                const std::string& source_name);

// Writes the same format; the reader reads back what the writer wrote.
void write_measurements_json(std::ostream& out, std::string_view device,
                             std::span<const Measurement> measurements);

}  // namespace servesim
