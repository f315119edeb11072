#include "validation/measurement.h"

#include <ostream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "validation/timing_stats.h"

namespace servesim::validation {
namespace {

Measurement timed(std::string device_name, std::string operator_kind,
                  std::span<const double> samples_s) {
  const TimingStats stats = compute_timing_stats(samples_s);
  Measurement m;
  m.device_name = std::move(device_name);
  m.operator_kind = std::move(operator_kind);
  m.repeats = static_cast<int>(samples_s.size());
  m.median_s = stats.median_s;
  m.min_s = stats.min_s;
  m.max_s = stats.max_s;
  return m;
}

void add_heads(nlohmann::json& j, const HeadShape& heads) {
  j["num_heads"] = heads.num_heads;
  j["num_kv_heads"] = heads.num_kv_heads;
  j["head_dim"] = heads.head_dim;
}

// The shape fields of each record kind (the contract in validation/README.md).
struct RecordFields {
  nlohmann::json& j;
  void operator()(const CopyRecord& r) const {
    j["size_bytes"] = r.size_bytes;
    j["bandwidth_bytes_per_s"] = r.bandwidth_bytes_per_s;
  }
  void operator()(const GemmShape& r) const {
    j["operator"] = r.op;
    j["m"] = r.m;
    j["n"] = r.n;
    j["k"] = r.k;
    j["dtype"] = element_type_name(r.dtype);
  }
  void operator()(const DecodeAttentionShape& r) const {
    j["batch"] = r.batch;
    j["context_tokens"] = r.context_tokens;
    add_heads(j, r.heads);
    j["block_size"] = r.block_size;
    j["dtype"] = element_type_name(r.dtype);
  }
  void operator()(const PrefillAttentionShape& r) const {
    j["batch"] = r.batch;
    j["chunk_tokens"] = r.chunk_tokens;
    j["context_tokens"] = r.context_tokens;
    add_heads(j, r.heads);
    j["dtype"] = element_type_name(r.dtype);
  }
  void operator()(const IterationRecord& r) const {
    j["pp"] = r.pp;
    j["prefill_sequences"] = r.shape.prefill_sequences;
    j["prefill_tokens"] = r.shape.prefill_tokens;
    j["prefill_context_tokens"] = r.shape.prefill_context_tokens;
    j["prefill_attention_pairs"] = r.shape.prefill_attention_pairs;
    j["decode_sequences"] = r.shape.decode_sequences;
    j["decode_context_tokens"] = r.shape.decode_context_tokens;
    j["predicted_s"] = r.predicted_s;
  }
};

}  // namespace

double achieved_bandwidth_bytes_per_s(std::uint64_t bytes_moved, double elapsed_s) {
  if (!(elapsed_s > 0.0)) {
    throw std::invalid_argument("achieved_bandwidth_bytes_per_s: elapsed time must be > 0");
  }
  return static_cast<double>(bytes_moved) / elapsed_s;
}

Measurement make_copy_measurement(std::string device_name, std::string operator_kind,
                                  std::uint64_t size_bytes, std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), std::move(operator_kind), samples_s);
  m.record = CopyRecord{size_bytes, achieved_bandwidth_bytes_per_s(2 * size_bytes, m.median_s)};
  return m;
}

Measurement make_measurement(std::string device_name, GemmShape gemm,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), "gemm", samples_s);
  m.record = std::move(gemm);
  return m;
}

Measurement make_measurement(std::string device_name, DecodeAttentionShape attention,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), "decode_attention", samples_s);
  m.record = attention;
  return m;
}

Measurement make_measurement(std::string device_name, PrefillAttentionShape attention,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), "prefill_attention", samples_s);
  m.record = attention;
  return m;
}

Measurement make_measurement(std::string device_name, IterationRecord iteration,
                             std::span<const double> samples_s) {
  Measurement m = timed(std::move(device_name), "iteration", samples_s);
  m.record = iteration;
  return m;
}

void write_measurements_json(std::ostream& out, std::string_view device_name,
                             std::span<const Measurement> measurements) {
  nlohmann::json list = nlohmann::json::array();
  for (const Measurement& m : measurements) {
    nlohmann::json j = {{"device_name", m.device_name},
                        {"operator_kind", m.operator_kind},
                        {"repeats", m.repeats},
                        {"median_s", m.median_s},
                        {"min_s", m.min_s},
                        {"max_s", m.max_s}};
    if (!m.model.empty()) j["model"] = m.model;
    if (m.tp > 0) j["tp"] = m.tp;
    std::visit(RecordFields{j}, m.record);
    list.push_back(std::move(j));
  }
  const nlohmann::json doc = {{"format", "servesim-measurements"},
                              {"version", 1},
                              {"device", device_name},
                              {"measurements", std::move(list)}};
  out << doc.dump(2) << '\n';
}

}  // namespace servesim::validation
