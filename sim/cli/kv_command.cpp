#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/cli/format.h"
#include "sim/cli/options.h"
#include "sim/core/error.h"

namespace servesim::cli {
namespace {

ModelSpec model_from(const po::variables_map& vm, const CommandContext& context) {
  const bool raw = vm.count("layers") != 0 || vm.count("d-model") != 0;
  if (vm.count("model") != 0) {
    if (raw) throw UsageError("give either --model or raw --layers/--d-model, not both");
    for (const char* flag : {"heads", "kv-heads", "kv-group", "ffn-dim", "vocab"}) {
      if (vm.count(flag) != 0) {
        throw UsageError(std::string("--") + flag +
                         " describes raw dimensions; with --model "
                         "the model file gives it");
      }
    }
    return load_model(vm["model"].as<std::string>(), context);
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

void print_human(std::ostream& out, const nlohmann::json& r) {
  Table table({"quantity", "value", ""}, {1});
  const auto bytes_row = [&](const char* label, const char* key) {
    if (!r.contains(key)) return;
    const double v = r[key].get<double>();
    table.add_row({label, format_bytes(v), format_count(v) + " B"});
  };
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
  bytes_row("KV per token (growing groups)", "kv_bytes_per_token");
  if (r["kv_reserved_bytes_per_sequence"].get<double>() > 0) {
    bytes_row("KV per sequence (windows, states)", "kv_reserved_bytes_per_sequence");
  }
  if (r.contains("kv_bytes")) {
    table.add_row({"tokens", format_count(r["tokens"].get<double>()), ""});
    bytes_row("KV for the tokens", "kv_bytes");
  }
  if (r.contains("hw")) {
    table.add_separator();
    table.add_row({"hardware", r["hw"].get<std::string>(),
                   "TP " + std::to_string(r["tp"].get<int>()) + ", PP " +
                       std::to_string(r["pp"].get<int>())});
    table.add_row({"weight dtype", r["weight_dtype"].get<std::string>(), ""});
    bytes_row("memory per GPU", "memory_capacity_bytes_per_gpu");
    table.add_row({"memory utilization", format_fixed(r["mem_util"].get<double>(), 2), ""});
    bytes_row("weights per GPU", "weight_bytes_per_gpu");
    bytes_row("activations + runtime per GPU", "activation_reserve_bytes_per_gpu");
    bytes_row("KV per GPU", "kv_bytes_per_gpu");
    bytes_row("KV capacity per replica", "kv_capacity_bytes");
    bytes_row("token slot per GPU", "kv_bytes_per_token_per_gpu");
    if (r.contains("kv_pools")) {
      const auto& p = r["kv_pools"];
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
    table.add_row({"KV capacity", format_count(r["kv_capacity_tokens"].get<double>()) + " tokens",
                   "vLLM: GPU KV cache size " +
                       format_count(r["vllm_kv_cache_size_tokens"].get<double>()) + " tokens"});
    table.add_row({"sequences at max length",
                   format_count(r["max_sequences_at_max_len"].get<double>()),
                   "of " + format_count(r["max_len"].get<double>()) + " tokens"});
  }
  table.print(out);
}

}  // namespace

int run_kv(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()(
      "model", po::value<std::string>()->value_name("NAME|PATH"),
      "model short name (servesim list), a shipped model's Hugging Face id, a path to a "
      "config.json or to a snapshot folder holding one")(
      "layers", po::value<std::int64_t>()->value_name("L"), "raw dimensions: decoder layers")(
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
      "hw", po::value<std::string>()->value_name("NAME|PATH"),
      "hardware profile name or path: adds weights, KV capacity and sequences that fit")(
      "mem-util", po::value<double>()->value_name("F")->default_value(0.9, "0.9"),
      "fraction of each GPU's memory the engine may use, in (0, 1]")(
      "max-len", po::value<std::int64_t>()->value_name("TOKENS"),
      "sequence length for max_sequences_at_max_len, tokens (default: the model's "
      "max_position_embeddings; 2048 for raw dimensions)")(
      "max-batched-tokens", po::value<std::int64_t>()->value_name("TOKENS")->default_value(8192),
      "tokens of the largest forward pass, for the activation reserve")(
      "max-num-seqs", po::value<std::int64_t>()->value_name("N")->default_value(256),
      "sequences sampled in one step, for the logits reserve")(
      "block-size", po::value<std::int64_t>()->value_name("TOKENS")->default_value(16),
      "tokens per KV block, for the pools of a model of several layer groups")(
      "gpu-memory-utilization", po::value<double>()->value_name("F"), "vLLM's name for --mem-util")(
      "max-model-len", po::value<std::int64_t>()->value_name("TOKENS"),
      "vLLM's name for --max-len")("max-num-batched-tokens",
                                   po::value<std::int64_t>()->value_name("TOKENS"),
                                   "vLLM's name for --max-batched-tokens")(
      "enable-prefix-caching", "accepted as vLLM has it; no effect on the KV arithmetic")(
      "no-enable-prefix-caching", "accepted as vLLM has it; no effect on the KV arithmetic")(
      "json", "print one JSON object instead of a table");
  add_parallelism_options(options);
  add_dtype_options(options);
  const auto vm = parse_options(
      context, options, "servesim kv (--model NAME|PATH | --layers L --d-model D) [options]",
      "Sizes the KV cache per layer group: full attention 2 x layers x KV heads x head_dim x\n"
      "bytes per token; sliding windows and attention chunks the same over at most W tokens;\n"
      "MLA one latent (kv_lora_rank + qk_rope_head_dim) per token and layer; recurrent layers a\n"
      "constant state per sequence. With --hw, also the weights per GPU, the KV capacity left\n"
      "after weights and an activation reserve, and how many sequences of --max-len fit.\n"
      "Example: servesim kv --model llama-3-8b --hw h100-sxm --tokens 8192");
  if (!vm) return 0;

  const ModelSpec model = model_from(*vm, context);
  KvReportOptions report;
  report.capacity.kv_dtype = kv_dtype_from(*vm, model);
  report.capacity.weight_dtype = weight_dtype_from(*vm, model);
  report.tokens = integer_flag(*vm, "tokens", 0);
  std::optional<HardwareProfile> hardware;
  if (vm->count("hw") != 0) {
    hardware = load_hardware((*vm)["hw"].as<std::string>(), context);
    KvCapacityOptions& o = report.capacity;
    o.parallelism = parallelism_from(*vm);
    const std::string mem_util = given_flag(*vm, "mem-util", "gpu-memory-utilization");
    o.memory_utilization = (*vm)[mem_util].as<double>();
    if (!(o.memory_utilization > 0 && o.memory_utilization <= 1)) {
      throw InputError("--" + mem_util, "expected a fraction in (0, 1], got " +
                                            std::to_string(o.memory_utilization));
    }
    o.max_batched_tokens =
        *integer_flag(*vm, given_flag(*vm, "max-batched-tokens", "max-num-batched-tokens"), 1);
    o.max_sequences = *integer_flag(*vm, "max-num-seqs", 1);
    o.block_tokens = *integer_flag(*vm, "block-size", 1);
    report.max_len = integer_flag(*vm, given_flag(*vm, "max-len", "max-model-len"), 1);
  }
  const nlohmann::json r = kv_report(model, hardware ? &*hardware : nullptr, report);
  if (vm->count("json") != 0) {
    context.out << r.dump(2) << '\n';
  } else {
    print_human(context.out, r);
  }
  return 0;
}

}  // namespace servesim::cli
