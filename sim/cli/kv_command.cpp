#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/format.h"
#include "sim/cli/options.h"
#include "sim/cli/run_options.h"
#include "sim/core/error.h"

namespace servesim::cli {
namespace {

// A model given by raw dimensions (--layers, --d-model, ...), or nothing when --model (or the
// configuration) names it.
std::optional<ModelSpec> raw_model(const po::variables_map& vm) {
  const bool raw = vm.count("layers") != 0 || vm.count("d-model") != 0;
  if (!raw) {
    for (const char* flag : {"heads", "kv-heads", "kv-group", "ffn-dim", "vocab"}) {
      if (vm.count(flag) != 0) {
        throw UsageError(std::string("--") + flag +
                         " describes raw dimensions; with --model "
                         "the model file gives it");
      }
    }
    return std::nullopt;
  }
  if (vm.count("model") != 0) {
    throw UsageError("give either --model or raw --layers/--d-model, not both");
  }
  if (vm.count("layers") == 0 || vm.count("d-model") == 0) {
    throw UsageError("give --model NAME|PATH, or raw dimensions with both --layers and --d-model");
  }
  RawModelDims dims;
  dims.num_layers = *integer_flag(vm, "layers", 1);
  dims.hidden_size = *integer_flag(vm, "d-model", 1);
  dims.num_heads = integer_flag(vm, "heads", 1);
  dims.num_kv_heads = integer_flag(vm, "kv-heads", 1);
  dims.kv_group = integer_flag(vm, "kv-group", 1);
  dims.intermediate_size = integer_flag(vm, "ffn-dim", 1).value_or(0);
  dims.vocab_size = integer_flag(vm, "vocab", 1).value_or(dims.vocab_size);
  dims.max_position_embeddings =
      integer_flag(vm, given_flag(vm, "max-len", "max-model-len"), 1).value_or(2048);
  return model_from_raw_dims(dims);
}

// A row of bytes: the size, then the exact count; none when `r` lacks the key.
void add_kv_bytes_row(Table& table, const nlohmann::json& r, const char* label, const char* key) {
  if (!r.contains(key)) return;
  const double v = r[key].get<double>();
  table.add_row({label, format_bytes(v), format_count(v) + " B"});
}

// The model's rows: its parameters, its KV groups and what the tokens' KV takes.
void add_model_kv_rows(Table& table, const nlohmann::json& r) {
  table.add_row({"model", r["model"].get<std::string>(), ""});
  table.add_row({"parameters (total / active)",
                 format_si(r["parameters_total"].get<double>(), "") + " / " +
                     format_si(r["parameters_active"].get<double>(), ""),
                 ""});
  if (r.contains("parameters_mtp")) {
    table.add_row(
        {"MTP parameters (not in total)", format_si(r["parameters_mtp"].get<double>(), ""), ""});
  }
  if (r.contains("quantization")) {
    table.add_row({"quantization", r["quantization"].get<std::string>(), ""});
  }
  table.add_row({"KV dtype", r["kv_dtype"].get<std::string>(), ""});
  for (const auto& g : r["kv_groups"]) {
    const std::string kind = g["kind"].get<std::string>();
    std::string label = "  " + kind + " (" + std::to_string(g["layers"].get<int>()) + " layers";
    if (g.contains("window_tokens")) {
      label += ", " + format_count(g["window_tokens"].get<double>()) + " tokens";
    }
    label += ")";
    if (g.contains("state_bytes_per_sequence")) {
      const double v = g["state_bytes_per_sequence"].get<double>();
      table.add_row({label, format_bytes(v) + " per sequence", format_count(v) + " B"});
    } else {
      const double v = g["bytes_per_token"].get<double>();
      table.add_row({label, format_bytes(v) + " per token", format_count(v) + " B"});
    }
  }
  add_kv_bytes_row(table, r, "KV per token (growing groups)", "kv_bytes_per_token");
  if (r["kv_reserved_bytes_per_sequence"].get<double>() > 0) {
    add_kv_bytes_row(table, r, "KV per sequence (windows, states)",
                     "kv_reserved_bytes_per_sequence");
  }
  if (r.contains("kv_bytes")) {
    table.add_row({"tokens", format_count(r["tokens"].get<double>()), ""});
    add_kv_bytes_row(table, r, "KV for the tokens", "kv_bytes");
  }
}

// The KV pool's blocks, and each group's share of them.
void add_kv_pool_rows(Table& table, const nlohmann::json& p) {
  table.add_row({"KV pool", format_count(p["blocks"].get<double>()) + " blocks",
                 format_count(p["block_tokens"].get<double>()) + " tokens x " +
                     format_count(p["layers_per_group"].get<double>()) + " layers, " +
                     format_bytes(p["block_bytes"].get<double>()) + " each"});
  for (const auto& g : p["groups"]) {
    std::string label = "  group " + g["kind"].get<std::string>();
    if (g.contains("window_tokens")) {
      label += " (" + format_count(g["window_tokens"].get<double>()) + " tokens)";
    }
    table.add_row({label, std::to_string(g["layers"].get<int>()) + " layers",
                   g.contains("block_tokens")
                       ? format_count(g["block_tokens"].get<double>()) + " tokens per block"
                       : "one block per sequence"});
  }
}

// With --hw: the replica's memory plan, its KV capacity and whether the engine starts.
void add_replica_memory_rows(Table& table, const nlohmann::json& r) {
  table.add_separator();
  table.add_row(
      {"hardware", r["hw"].get<std::string>(),
       "TP " + std::to_string(r["tp"].get<int>()) + ", PP " + std::to_string(r["pp"].get<int>())});
  table.add_row({"weight dtype", r["weight_dtype"].get<std::string>(), ""});
  add_kv_bytes_row(table, r, "memory per GPU", "memory_capacity_bytes_per_gpu");
  table.add_row({"memory utilization", format_fixed(r["mem_util"].get<double>(), 2), ""});
  add_kv_bytes_row(table, r, "weights per GPU", "weight_bytes_per_gpu");
  add_kv_bytes_row(table, r, "activations + runtime per GPU", "activation_reserve_bytes_per_gpu");
  add_kv_bytes_row(table, r, "KV per GPU", "kv_bytes_per_gpu");
  add_kv_bytes_row(table, r, "KV capacity per replica", "kv_capacity_bytes");
  add_kv_bytes_row(table, r, "token slot per GPU", "kv_bytes_per_token_per_gpu");
  if (r.contains("kv_pools")) add_kv_pool_rows(table, r["kv_pools"]);
  table.add_row({"KV capacity", format_count(r["kv_capacity_tokens"].get<double>()) + " tokens",
                 "vLLM: GPU KV cache size " +
                     format_count(r["vllm_kv_cache_size_tokens"].get<double>()) + " tokens"});
  table.add_row({"sequences at max length",
                 format_count(r["max_sequences_at_max_len"].get<double>()),
                 "of " + format_count(r["max_len"].get<double>()) + " tokens"});
  table.add_row({"engine " + r["engine"].get<std::string>(),
                 r["starts"].get<bool>() ? "starts" : "does not start",
                 "longest sequence that fits: " +
                     format_count(r["max_len_that_fits"].get<double>()) + " tokens"});
}

void print_human(std::ostream& out, const nlohmann::json& r) {
  Table table({"quantity", "value", ""}, {1});
  add_model_kv_rows(table, r);
  if (r.contains("hw")) add_replica_memory_rows(table, r);
  table.print(out);
  if (r.contains("does_not_start")) out << r["does_not_start"].get<std::string>() << '\n';
}

}  // namespace

int run_kv(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  add_run_options(options);
  po::options_description kv("The KV calculator's own", 100, 50);
  kv.add_options()("layers", po::value<std::int64_t>()->value_name("L"),
                   "raw dimensions in place of --model: decoder layers")(
      "d-model", po::value<std::int64_t>()->value_name("D"), "raw dimensions: hidden size d_model")(
      "heads", po::value<std::int64_t>()->value_name("H"),
      "raw dimensions: attention heads (default: d_model / 128 when that divides, else the KV "
      "group)")("kv-heads", po::value<std::int64_t>()->value_name("K"),
                "raw dimensions: KV heads (default: heads / KV group)")(
      "kv-group", po::value<std::int64_t>()->value_name("G"),
      "raw dimensions: query heads per KV head, 1 = multi-head, 8 = GQA 8:1 (default 1)")(
      "ffn-dim", po::value<std::int64_t>()->value_name("N"),
      "raw dimensions: MLP width, for weight bytes (default 4 x d_model)")(
      "vocab", po::value<std::int64_t>()->value_name("N"),
      "raw dimensions: vocabulary size (default 32000)")(
      "tokens", po::value<std::int64_t>()->value_name("N"),
      "tokens to size the cache for (reports kv_bytes)")(
      "json", "print one JSON object instead of a table");
  options.add(kv);
  const auto vm = parse_options(
      context, options, "servesim kv (--model NAME|PATH | --layers L --d-model D) [options]",
      "Sizes the KV cache per layer group: full attention 2 x layers x KV heads x head_dim x\n"
      "bytes per token; sliding windows and attention chunks the same over at most W tokens;\n"
      "MLA one latent (kv_lora_rank + qk_rope_head_dim) per token and layer; recurrent layers a\n"
      "constant state per sequence. With --hw (or --config), also the replica's memory plan as\n"
      "`servesim run` makes it with the same flags and the same defaults (the engine's: --engine,\n"
      "default vllm): weights per GPU, the KV capacity left after weights and the activation\n"
      "reserve, how many sequences of --max-len fit, and whether the engine starts.\n"
      "Example: servesim kv --model llama-3-8b --hw h100-sxm --tokens 8192");
  if (!vm) return 0;

  KvRunReportOptions report;
  report.model = raw_model(*vm);
  if (!report.model && vm->count("model") == 0 && vm->count("config") == 0) {
    throw UsageError("give --model NAME|PATH, or raw dimensions with both --layers and --d-model");
  }
  report.tokens = integer_flag(*vm, "tokens", 0);
  report.with_hardware = vm->count("hw") != 0 || vm->count("config") != 0;
  ConfigSources sources = run_config_sources(*vm);
  // Raw dimensions stand for the model; the document's max_len is theirs.
  const nlohmann::json document = assemble_config(sources, context.data_root);
  const nlohmann::json r = kv_report_for_run(document, context.data_root, report);
  if (vm->count("json") != 0) {
    context.out << r.dump(2) << '\n';
  } else {
    print_human(context.out, r);
  }
  return 0;
}

}  // namespace servesim::cli
