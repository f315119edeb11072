#include "python/calculators.h"

#include <filesystem>

#include "python/conversions.h"
#include "python/settings.h"
#include "sim/app/app.h"
#include "sim/config/catalog.h"
#include "sim/config/model_catalog.h"
#include "sim/core/error.h"
#include "sim/engine/engine_profile.h"
#include "sim/model/model_loader.h"

namespace servesim::python {
namespace {

std::int64_t at_least(std::int64_t value, std::int64_t minimum, const char* name) {
  if (value < minimum) {
    throw InputError(name, "expected an integer of at least " + std::to_string(minimum) + ", got " +
                               std::to_string(value));
  }
  return value;
}

std::optional<std::int64_t> at_least(std::optional<std::int64_t> value, std::int64_t minimum,
                                     const char* name) {
  if (value) at_least(*value, minimum, name);
  return value;
}

ModelSpec load_model(const std::filesystem::path& root, const std::string& name) {
  return load_catalog_model(root, name, "model");
}

HardwareProfile load_hardware(const std::filesystem::path& root, const std::string& name) {
  return load_hardware_file(
      Catalog(root / "hw_profiles", "hardware profile", "hardware").resolve(name));
}

DType weight_dtype(const std::string& text, const ModelSpec& model) {
  return text == "auto" ? auto_weight_dtype(model) : parse_dtype(text, "weight_dtype");
}

DType kv_dtype(const std::string& text, const ModelSpec& model) {
  return text == "auto" ? auto_kv_dtype(model) : parse_kv_dtype(text, "kv_dtype");
}

Parallelism parallelism(std::int64_t tp, std::int64_t pp) {
  return Parallelism{at_least(tp, 1, "tp"), at_least(pp, 1, "pp")};
}

ModelSpec kv_model(const KvArguments& a, const std::filesystem::path& root) {
  const bool raw = a.layers || a.d_model;
  if (a.model) {
    if (raw || a.heads || a.kv_heads || a.kv_group || a.ffn_dim || a.vocab) {
      throw UsageError("give either model or raw dimensions (layers, d_model, ...), not both");
    }
    return load_model(root, *a.model);
  }
  if (!a.layers || !a.d_model) {
    throw UsageError(
        "give model (a name or a config.json), or raw dimensions with both layers "
        "and d_model");
  }
  RawModelDims dims;
  dims.num_layers = at_least(*a.layers, 1, "layers");
  dims.hidden_size = at_least(*a.d_model, 1, "d_model");
  dims.num_heads = at_least(a.heads, 1, "heads");
  dims.num_kv_heads = at_least(a.kv_heads, 1, "kv_heads");
  dims.kv_group = at_least(a.kv_group, 1, "kv_group");
  dims.intermediate_size = at_least(a.ffn_dim, 1, "ffn_dim").value_or(0);
  dims.vocab_size = at_least(a.vocab, 1, "vocab").value_or(dims.vocab_size);
  dims.max_position_embeddings = at_least(a.max_len, 1, "max_len").value_or(2048);
  return model_from_raw_dims(dims);
}

}  // namespace

py::dict kv(const KvArguments& a) {
  const std::filesystem::path root = data_root();
  nlohmann::json report;
  {
    const py::gil_scoped_release release;
    // The same path as `servesim kv`: the settings as run's flags, assembled with the
    // engine's defaults, then the report the CLI prints.
    KvRunReportOptions options;
    std::vector<RunSetting> settings;
    if (a.layers || a.d_model) {
      options.model = kv_model(a, root);
    } else if (a.model) {
      settings.push_back({"model", *a.model});
    } else {
      throw UsageError(
          "give model (a name or a config.json), or raw dimensions with both layers "
          "and d_model");
    }
    options.tokens = at_least(a.tokens, 0, "tokens").value_or(0);
    options.with_hardware = a.hardware.has_value();
    if (a.hardware) settings.push_back({"hw", *a.hardware});
    settings.push_back({"tp", a.tp});
    settings.push_back({"pp", a.pp});
    settings.push_back({"weight-dtype", a.weight_dtype});
    settings.push_back({"kv-dtype", a.kv_dtype});
    if (a.mem_util) settings.push_back({"mem-util", *a.mem_util});
    if (a.max_len) settings.push_back({"max-len", *a.max_len});
    if (a.max_batched_tokens) settings.push_back({"max-num-batched-tokens", *a.max_batched_tokens});
    if (a.max_num_seqs) settings.push_back({"max-num-seqs", *a.max_num_seqs});
    const nlohmann::json document =
        assemble_config(run_config_sources(settings, SettingNames::Keywords), root);
    report = kv_report_for_run(document, root, options);
  }
  return to_python(report);
}

py::dict roofline(const RooflineArguments& a) {
  const std::filesystem::path root = data_root();
  nlohmann::json report;
  {
    const py::gil_scoped_release release;
    const ModelSpec model = load_model(root, a.model);
    const HardwareProfile hardware = load_hardware(root, a.hardware);
    RooflineOptions options;
    options.parallelism = parallelism(a.tp, a.pp);
    options.parallelism.data = at_least(a.dp, 1, "dp");
    options.parallelism.expert = a.expert_parallel;
    options.weight_dtype = weight_dtype(a.weight_dtype, model);
    options.kv_dtype = kv_dtype(a.kv_dtype, model);
    if (!(a.expert_load_imbalance >= 1.0)) {
      throw InputError("expert_load_imbalance", "expected a number of at least 1");
    }
    options.expert_load_imbalance = a.expert_load_imbalance;
    if (a.engine) {
      options.engine =
          load_engine_file(Catalog(root / "engines", "engine", "engine").resolve(*a.engine)).costs;
    }
    RooflineQuery query;
    if (a.generate) {
      query.generate =
          RooflineQuery::Generation{at_least(a.prefill_tokens, 1, "prefill_tokens").value_or(128),
                                    at_least(*a.generate, 1, "generate")};
    } else {
      const auto prefill_tokens = at_least(a.prefill_tokens, 0, "prefill_tokens");
      query.batch.decode_sequences =
          at_least(a.decode_batch, 0, "decode_batch").value_or(prefill_tokens ? 0 : 32);
      query.batch.decode_context_tokens = at_least(a.context, 1, "context");
      query.batch.prefill_tokens = prefill_tokens.value_or(0);
      query.batch.prefill_context_tokens = at_least(a.prefill_context, 0, "prefill_context");
      query.batch.speculative_tokens = at_least(a.speculative, 1, "speculative").value_or(0);
    }
    report = roofline_report(model, hardware, options, query);
  }
  py::dict document = to_python(report);
  if (report.contains("operators")) {
    py::list rows;
    for (const auto& op : report["operators"])
      rows.append(to_python(op));
    py::list columns;
    for (const char* name : {"name", "flops", "bytes", "arithmetic_intensity_flops_per_byte",
                             "balance_flops_per_byte", "bound", "time_s", "why", "kernel"})
      columns.append(name);
    document["operators"] =
        py::module_::import("pandas").attr("DataFrame")(rows, py::arg("columns") = columns);
  }
  return document;
}

}  // namespace servesim::python
