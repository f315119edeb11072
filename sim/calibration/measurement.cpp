#include "sim/calibration/measurement.h"

#include <algorithm>
#include <array>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"

namespace servesim {
namespace {

constexpr std::array<std::pair<MeasurementKind, std::string_view>, 9> kKinds{{
    {MeasurementKind::Gemm, "gemm"},
    {MeasurementKind::DecodeAttention, "decode_attention"},
    {MeasurementKind::PrefillAttention, "prefill_attention"},
    {MeasurementKind::MemcpyD2D, "memcpy_d2d"},
    {MeasurementKind::CopyKernelD2D, "copy_kernel_d2d"},
    {MeasurementKind::AllReduce, "all_reduce"},
    {MeasurementKind::Iteration, "iteration"},
    {MeasurementKind::HostOverhead, "host_overhead"},
    {MeasurementKind::MoeGemm, "moe_gemm"},
}};

constexpr std::array<std::string_view, 5> kGemmOperators{"qkv", "o", "mlp_up", "mlp_down",
                                                         "lm_head"};

constexpr std::array<std::string_view, 3> kTimings{"per_call", "stream", "graph"};

std::int64_t count(JsonObjectReader& r, std::string_view key) {
  return r.optional_nonnegative_integer(key).value_or(0);
}

// Where a field is, for parse_dtype's errors.
std::string field_where(JsonObjectReader& r, std::string_view key) {
  return r.source_name() + ": field \"" + r.key_path(key) + "\"";
}

DType read_dtype(JsonObjectReader& r, std::string_view key) {
  return parse_dtype(r.string(key), field_where(r, key));
}

std::optional<DType> read_optional_dtype(JsonObjectReader& r, std::string_view key) {
  const auto name = r.optional_string(key);
  if (!name) return std::nullopt;
  return parse_dtype(*name, field_where(r, key));
}

void read_attention_heads(JsonObjectReader& r, Measurement& m) {
  m.num_heads = r.positive_integer("num_heads");
  m.num_kv_heads = r.positive_integer("num_kv_heads");
  m.head_dim = r.positive_integer("head_dim");
  if (m.num_heads % m.num_kv_heads != 0) {
    r.fail("num_kv_heads", "expected a divisor of num_heads (" + std::to_string(m.num_heads) + ")");
  }
  m.dtype = read_optional_dtype(r, "dtype").value_or(m.dtype);
}

// What the harness's quant-gemm and moe-gemm records add (validation/README.md): the
// activations' and output's formats, the int4 scales' group and the kernel that ran.
void read_gemm_kernel(JsonObjectReader& r, Measurement& m) {
  m.activation_dtype = read_optional_dtype(r, "activation_dtype");
  m.output_dtype = read_optional_dtype(r, "output_dtype");
  m.group_size = r.optional_positive_integer("group_size").value_or(0);
  if (auto kernel = r.optional_object("kernel")) {
    Measurement::Kernel& k = m.kernel.emplace();
    k.name = kernel->string("name");
    k.kind = kernel->optional_string("kind").value_or("");
    k.cores = kernel->optional_string("cores").value_or("");
    k.tile_m = kernel->optional_positive_number("tile_m").value_or(0);
    k.tile_n = kernel->optional_positive_number("tile_n").value_or(0);
    kernel->reject_unknown_keys();
  }
}

void read_gemm_operator(JsonObjectReader& r, Measurement& m, bool required) {
  const auto op =
      required ? std::optional<std::string>(r.string("operator")) : r.optional_string("operator");
  if (!op) return;
  bool valid = false;
  for (const auto name : kGemmOperators)
    valid = valid || name == *op;
  if (!valid) {
    r.fail("operator",
           "unknown GEMM operator \"" + *op + "\" (valid: qkv, o, mlp_up, mlp_down, lm_head)");
  }
  m.gemm_operator = *op;
}

// A moe_gemm record: one expert projection (mlp_up or mlp_down) over the routing it ran.
void read_moe_gemm(JsonObjectReader& r, Measurement& m) {
  read_gemm_operator(r, m, true);
  if (m.gemm_operator != "mlp_up" && m.gemm_operator != "mlp_down") {
    r.fail("operator", "expected mlp_up or mlp_down for a moe_gemm record");
  }
  m.n = r.positive_integer("n");
  m.k = r.positive_integer("k");
  m.dtype = read_dtype(r, "dtype");
  m.tokens = r.positive_integer("tokens");
  m.experts = r.positive_integer("experts");
  m.top_k = r.positive_integer("top_k");
  if (m.top_k > m.experts) {
    r.fail("top_k", "expected at most experts (" + std::to_string(m.experts) + ")");
  }
  m.routed_rows = r.positive_integer("routed_rows");
  if (m.routed_rows != m.tokens * m.top_k) {
    r.fail("routed_rows", "expected tokens x top_k (" + std::to_string(m.tokens * m.top_k) + ")");
  }
  m.experts_touched = r.positive_integer("experts_touched");
  // Each token picks top_k distinct experts.
  if (m.experts_touched < m.top_k || m.experts_touched > std::min(m.experts, m.routed_rows)) {
    r.fail("experts_touched", "expected between top_k (" + std::to_string(m.top_k) +
                                  ") and min(experts, routed_rows)");
  }
  m.padded_rows = r.positive_integer("padded_rows");
  if (m.padded_rows < m.routed_rows) {
    r.fail("padded_rows", "expected at least routed_rows (" + std::to_string(m.routed_rows) + ")");
  }
  m.seed = r.optional_nonnegative_integer("seed");
  read_gemm_kernel(r, m);
}

// How the record was timed: "per_call", or back to back ("stream", "graph") with the launches
// each sample averaged.
void read_timing(JsonObjectReader& r, Measurement& m) {
  m.timing = r.optional_string("timing").value_or("");
  if (!m.timing.empty() &&
      std::find(kTimings.begin(), kTimings.end(), m.timing) == kTimings.end()) {
    r.fail("timing", "unknown timing \"" + m.timing + "\" (valid: per_call, stream, graph)");
  }
  const auto calls = r.optional_positive_integer("calls_per_sample");
  const bool back_to_back = m.timing == "stream" || m.timing == "graph";
  if (back_to_back && !calls) r.fail("calls_per_sample", "required with timing stream or graph");
  if (!back_to_back && calls) {
    r.fail("calls_per_sample", "only with timing stream or graph (one call per sample otherwise)");
  }
  m.calls_per_sample = calls.value_or(0);
}

// "operator_kind", one of kKinds.
MeasurementKind read_measurement_kind(JsonObjectReader& r) {
  MeasurementKind measured = MeasurementKind::Gemm;
  const std::string kind = r.string("operator_kind");
  bool known = false;
  for (const auto& [k, name] : kKinds) {
    if (name == kind) {
      measured = k;
      known = true;
    }
  }
  if (!known) {
    r.fail("operator_kind",
           "unknown kind \"" + kind + "\" (valid: " + std::string(measurement_kind_list()) + ")");
  }
  return measured;
}

// What every record has: the device, the repeats and their statistics, the model and its tp.
void read_measured_statistics(JsonObjectReader& r, Measurement& m, const std::string& device) {
  m.device_name = r.optional_string("device_name").value_or(device);
  m.repeats = r.positive_integer("repeats");
  m.median_s = r.positive_number("median_s");
  m.min_s = r.optional_positive_number("min_s");
  m.max_s = r.optional_positive_number("max_s");
  if ((m.min_s && *m.min_s > m.median_s) || (m.max_s && *m.max_s < m.median_s)) {
    r.fail("median_s", "expected min_s <= median_s <= max_s");
  }
  m.model = r.optional_string("model").value_or("");
  m.tp = r.optional_positive_integer("tp").value_or(1);
}

// An iteration record: the model's parallelism and the batch's shape.
void read_iteration_record(JsonObjectReader& r, Measurement& m) {
  m.model = r.string("model");
  m.tp = r.positive_integer("tp");
  m.pp = r.positive_integer("pp");
  BatchShape& s = m.shape;
  s.prefill_sequences = count(r, "prefill_sequences");
  s.prefill_tokens = count(r, "prefill_tokens");
  s.prefill_context_tokens = count(r, "prefill_context_tokens");
  s.prefill_attention_pairs = r.optional_number("prefill_attention_pairs").value_or(0);
  if (s.prefill_attention_pairs < 0) r.fail("prefill_attention_pairs", "expected >= 0");
  // Without it, the chunks are taken as equal.
  const double chunks = static_cast<double>(std::max<std::int64_t>(s.prefill_sequences, 1));
  const double chunk = static_cast<double>(s.prefill_tokens) / chunks;
  s.prefill_masked_pairs =
      r.optional_number("prefill_masked_pairs").value_or(chunks * chunk * (chunk - 1) / 2);
  if (s.prefill_masked_pairs < 0) r.fail("prefill_masked_pairs", "expected >= 0");
  s.decode_sequences = count(r, "decode_sequences");
  s.decode_context_tokens = count(r, "decode_context_tokens");
  s.sampled_sequences = r.optional_nonnegative_integer("sampled_sequences")
                            .value_or(s.prefill_sequences + s.decode_sequences);
  if (s.empty()) r.fail("prefill_tokens", "an iteration needs prefill or decode tokens");
  if ((s.prefill_tokens > 0) != (s.prefill_sequences > 0)) {
    r.fail("prefill_sequences", "expected prefill_sequences > 0 exactly when prefill_tokens > 0");
  }
  m.predicted_s = r.optional_number("predicted_s");
}

Measurement read_record(JsonObjectReader& r, const std::string& device) {
  Measurement m;
  m.kind = read_measurement_kind(r);
  read_measured_statistics(r, m, device);
  read_timing(r, m);
  switch (m.kind) {
    case MeasurementKind::Gemm:
      m.m = r.positive_integer("m");
      m.n = r.positive_integer("n");
      m.k = r.positive_integer("k");
      m.dtype = read_dtype(r, "dtype");
      read_gemm_operator(r, m, false);
      read_gemm_kernel(r, m);
      break;
    case MeasurementKind::MoeGemm:
      read_moe_gemm(r, m);
      break;
    case MeasurementKind::DecodeAttention:
      m.batch = r.positive_integer("batch");
      m.context_tokens = r.positive_integer("context_tokens");
      m.block_size = r.optional_nonnegative_integer("block_size").value_or(0);
      read_attention_heads(r, m);
      break;
    case MeasurementKind::PrefillAttention:
      m.batch = r.optional_positive_integer("batch").value_or(1);
      m.chunk_tokens = r.positive_integer("chunk_tokens");
      m.context_tokens = count(r, "context_tokens");
      read_attention_heads(r, m);
      break;
    case MeasurementKind::MemcpyD2D:
    case MeasurementKind::CopyKernelD2D:
      m.size_bytes = r.positive_number("size_bytes");
      m.bandwidth_bytes_per_s = r.optional_positive_number("bandwidth_bytes_per_s");
      break;
    case MeasurementKind::AllReduce:
      m.size_bytes = r.positive_number("size_bytes");
      m.ranks = r.positive_integer("ranks");
      break;
    case MeasurementKind::Iteration:
      read_iteration_record(r, m);
      break;
    case MeasurementKind::HostOverhead:
      m.batch = r.positive_integer("batch");
      break;
  }
  r.reject_unknown_keys();
  return m;
}

void write_gemm_kernel(const Measurement& m, nlohmann::json& j) {
  if (m.activation_dtype) j["activation_dtype"] = dtype_name(*m.activation_dtype);
  if (m.output_dtype) j["output_dtype"] = dtype_name(*m.output_dtype);
  if (m.group_size > 0) j["group_size"] = m.group_size;
  if (!m.kernel) return;
  nlohmann::json kernel = {{"name", m.kernel->name}};
  if (!m.kernel->kind.empty()) kernel["kind"] = m.kernel->kind;
  if (!m.kernel->cores.empty()) kernel["cores"] = m.kernel->cores;
  if (m.kernel->tile_m > 0) kernel["tile_m"] = m.kernel->tile_m;
  if (m.kernel->tile_n > 0) kernel["tile_n"] = m.kernel->tile_n;
  j["kernel"] = std::move(kernel);
}

}  // namespace

std::string_view measurement_kind_name(MeasurementKind kind) noexcept {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "?";
}

std::string_view measurement_kind_list() noexcept {
  return "gemm, decode_attention, prefill_attention, memcpy_d2d, copy_kernel_d2d, all_reduce, "
         "iteration, host_overhead, moe_gemm";
}

std::string Measurement::class_name() const {
  std::string name(measurement_kind_name(kind));
  if (!gemm_operator.empty()) name += "." + gemm_operator;
  const bool gemm = kind == MeasurementKind::Gemm || kind == MeasurementKind::MoeGemm;
  if (gemm && dtype != DType::FP16 && dtype != DType::BF16 && dtype != DType::FP32) {
    name += "." + std::string(dtype_name(dtype));
  }
  if (timing == "stream" || timing == "graph") name += "." + timing;
  return name;
}

std::vector<Measurement> measurements_from_json(const nlohmann::json& document,
                                                const std::string& source_name) {
  JsonObjectReader r(document, source_name);
  if (r.string("format") != "servesim-measurements") {
    r.fail("format", "expected \"servesim-measurements\"");
  }
  if (r.positive_integer("version") != 1) r.fail("version", "expected 1 (the only version)");
  const std::string device = r.optional_string("device").value_or("");
  const nlohmann::json* list = r.optional_raw("measurements");
  if (list == nullptr || !list->is_array()) r.fail("measurements", "expected an array of records");
  r.ignore("comment");
  r.reject_unknown_keys();
  if (list->empty()) r.fail("measurements", "no records: nothing to fit or validate");
  std::vector<Measurement> out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string key = "measurements[" + std::to_string(i) + "]";
    JsonObjectReader record((*list)[i], source_name, key);
    Measurement m = read_record(record, device);
    m.where = source_name + ": " + key;
    m.source = source_name;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Measurement> read_measurements_file(const std::filesystem::path& path) {
  return measurements_from_json(read_json_file(path), path.string());
}

void write_measurements_json(std::ostream& out, std::string_view device,
                             std::span<const Measurement> measurements) {
  nlohmann::json list = nlohmann::json::array();
  for (const Measurement& m : measurements) {
    nlohmann::json j = {{"operator_kind", measurement_kind_name(m.kind)},
                        {"device_name", m.device_name},
                        {"repeats", m.repeats},
                        {"median_s", m.median_s}};
    if (m.min_s) j["min_s"] = *m.min_s;
    if (m.max_s) j["max_s"] = *m.max_s;
    if (!m.model.empty()) j["model"] = m.model;
    if (m.tp != 1 || m.kind == MeasurementKind::Iteration) j["tp"] = m.tp;
    if (!m.timing.empty()) j["timing"] = m.timing;
    if (m.calls_per_sample > 0) j["calls_per_sample"] = m.calls_per_sample;
    const auto heads = [&] {
      j["num_heads"] = m.num_heads;
      j["num_kv_heads"] = m.num_kv_heads;
      j["head_dim"] = m.head_dim;
      j["dtype"] = dtype_name(m.dtype);
    };
    switch (m.kind) {
      case MeasurementKind::Gemm:
        j.update({{"m", m.m}, {"n", m.n}, {"k", m.k}, {"dtype", dtype_name(m.dtype)}});
        if (!m.gemm_operator.empty()) j["operator"] = m.gemm_operator;
        write_gemm_kernel(m, j);
        break;
      case MeasurementKind::MoeGemm:
        j.update({{"operator", m.gemm_operator},
                  {"n", m.n},
                  {"k", m.k},
                  {"dtype", dtype_name(m.dtype)},
                  {"tokens", m.tokens},
                  {"top_k", m.top_k},
                  {"experts", m.experts},
                  {"experts_touched", m.experts_touched},
                  {"routed_rows", m.routed_rows},
                  {"padded_rows", m.padded_rows}});
        if (m.seed) j["seed"] = *m.seed;
        write_gemm_kernel(m, j);
        break;
      case MeasurementKind::DecodeAttention:
        j.update({{"batch", m.batch},
                  {"context_tokens", m.context_tokens},
                  {"block_size", m.block_size}});
        heads();
        break;
      case MeasurementKind::PrefillAttention:
        j.update({{"batch", m.batch},
                  {"chunk_tokens", m.chunk_tokens},
                  {"context_tokens", m.context_tokens}});
        heads();
        break;
      case MeasurementKind::MemcpyD2D:
      case MeasurementKind::CopyKernelD2D:
        j["size_bytes"] = m.size_bytes;
        if (m.bandwidth_bytes_per_s) j["bandwidth_bytes_per_s"] = *m.bandwidth_bytes_per_s;
        break;
      case MeasurementKind::AllReduce:
        j.update({{"size_bytes", m.size_bytes}, {"ranks", m.ranks}});
        break;
      case MeasurementKind::Iteration:
        j.update({{"pp", m.pp},
                  {"prefill_sequences", m.shape.prefill_sequences},
                  {"prefill_tokens", m.shape.prefill_tokens},
                  {"prefill_context_tokens", m.shape.prefill_context_tokens},
                  {"prefill_attention_pairs", m.shape.prefill_attention_pairs},
                  {"prefill_masked_pairs", m.shape.prefill_masked_pairs},
                  {"decode_sequences", m.shape.decode_sequences},
                  {"decode_context_tokens", m.shape.decode_context_tokens},
                  {"sampled_sequences", m.shape.sampled_sequences}});
        if (m.predicted_s) j["predicted_s"] = *m.predicted_s;
        break;
      case MeasurementKind::HostOverhead:
        j["batch"] = m.batch;
        break;
    }
    list.push_back(std::move(j));
  }
  const nlohmann::json doc = {{"format", "servesim-measurements"},
                              {"version", 1},
                              {"device", device},
                              {"measurements", std::move(list)}};
  out << doc.dump(2) << '\n';
}

}  // namespace servesim
