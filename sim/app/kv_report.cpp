#include "sim/app/kv_report.h"

#include <cmath>
#include <string>

#include "sim/model/model_size.h"

namespace servesim {
namespace {

// A whole number as a JSON integer, anything else as a double.
nlohmann::json json_number(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

}  // namespace

nlohmann::json kv_report(const ModelSpec& model, const HardwareProfile* hardware,
                         const KvReportOptions& options) {
  const KvCapacityOptions& o = options.capacity;
  const ParameterCounts params = count_parameters(model);
  const double bytes_per_token = kv_bytes_per_token(model, o.kv_dtype);

  nlohmann::json r;
  r["model"] = model.name;
  r["parameters_total"] = params.total;
  r["parameters_active"] = params.active;
  r["kv_dtype"] = std::string(dtype_name(o.kv_dtype));
  r["kv_bytes_per_token"] = json_number(bytes_per_token);
  if (options.tokens) {
    r["tokens"] = *options.tokens;
    r["kv_bytes"] = json_number(bytes_per_token * static_cast<double>(*options.tokens));
  }
  if (hardware != nullptr) {
    const KvCapacity c = plan_kv_capacity(model, *hardware, o);
    const std::int64_t max_len = options.max_len.value_or(model.max_position_embeddings);
    r["hw"] = hardware->name;
    r["tp"] = o.parallelism.tensor;
    r["pp"] = o.parallelism.pipeline;
    r["weight_dtype"] = std::string(dtype_name(o.weight_dtype));
    r["mem_util"] = o.memory_utilization;
    r["memory_capacity_bytes_per_gpu"] = json_number(c.memory_capacity_bytes_per_gpu);
    r["usable_bytes_per_gpu"] = json_number(std::floor(c.usable_bytes_per_gpu));
    r["weight_bytes_per_gpu"] = json_number(c.weight_bytes_per_gpu);
    r["activation_reserve_bytes_per_gpu"] =
        json_number(std::ceil(c.activation_reserve_bytes_per_gpu));
    r["kv_bytes_per_gpu"] = json_number(std::floor(c.kv_bytes_per_gpu));
    r["kv_capacity_bytes"] = json_number(std::floor(c.kv_capacity_bytes));
    r["kv_capacity_tokens"] = c.kv_capacity_tokens;
    r["max_len"] = max_len;
    r["max_sequences_at_max_len"] = c.kv_capacity_tokens / max_len;
  }
  return r;
}

}  // namespace servesim
