#include <string>
#include <vector>

#include "sim/app/app.h"
#include "sim/cli/format.h"
#include "sim/cli/options.h"
#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "sim/engine/engine_profile.h"
#include "sim/hardware/generation_cost.h"
#include "sim/hardware/impl/roofline_model.h"

namespace servesim::cli {
namespace {

void print_cost(std::ostream& out, const IterationCost& cost,
                const std::vector<RooflineModel::GemmChoice>& kernels) {
  Table table(
      {"operator", "GFLOP", "MB moved", "FLOP/B", "balance", "bound", "time", "share", "kernel"});
  const auto kernel = [&](std::size_t i) {
    for (const RooflineModel::GemmChoice& g : kernels) {
      if (static_cast<std::size_t>(g.op) == i) return describe_gemm_kernel(g);
    }
    return std::string();
  };
  const auto share = [&](double t) { return format_fixed(100 * t / cost.total_time_s, 1) + "%"; };
  // Two decimals below 10 FLOP/B, so that a GEMV's intensity and balance (both near 1) show
  // which side of the other each is.
  const auto per_byte = [](double v) { return format_fixed(v, v < 10 ? 2 : 1); };
  for (std::size_t i = 0; i < kOperatorCount; ++i) {
    const OperatorCost& op = cost.operators[i];
    if (!op.present()) continue;
    const bool roofline = op.bound == Bound::Compute || op.bound == Bound::Memory;
    table.add_row({std::string(operator_name(static_cast<OperatorKind>(i))),
                   op.flops > 0 ? format_fixed(op.flops / 1e9, 2) : "-",
                   op.bytes > 0 ? format_fixed(op.bytes / 1e6, 2) : "-",
                   roofline ? per_byte(op.intensity_flops_per_byte()) : "-",
                   roofline ? per_byte(op.balance_flops_per_byte) : "-",
                   std::string(bound_name(op.bound)), format_seconds(op.time_s), share(op.time_s),
                   kernel(i)});
  }
  table.add_separator();
  table.add_row({"total", format_fixed(cost.total_flops() / 1e9, 2),
                 format_fixed(cost.total_bytes() / 1e6, 2), "", "",
                 std::string(bound_name(cost.dominant_bound())), format_seconds(cost.total_time_s),
                 "100.0%", ""});
  table.print(out);
  out << "Bound: " << bound_name(cost.dominant_bound()) << " ("
      << share(cost.time_s(cost.dominant_bound())) << " of the time is in "
      << bound_name(cost.dominant_bound()) << "-bound operators)\n"
      << "FLOP/B is an operator's arithmetic intensity; balance is the intensity at which its\n"
         "achieved compute and memory ceilings meet: above it, the operator is compute-bound.\n"
         "kernel is the GEMM kernel assumed at this m (docs/cost_model.md, \"GEMM kernels by\n"
         "M\"): a GEMV, tiles of rows x columns (\"fitted\": the profile's calibrated large\n"
         "tile), or a grouped MoE GEMM whose rows are padded per expert.\n";
}

// --tp, --pp, --dp, the dtypes, --expert-load-imbalance and --engine.
RooflineOptions roofline_options_from(const po::variables_map& vm, const ModelSpec& model,
                                      const CommandContext& context) {
  RooflineOptions o;
  o.parallelism = parallelism_from(vm);
  o.weight_dtype = weight_dtype_from(vm, model);
  o.kv_dtype = kv_dtype_from(vm, model);
  o.expert_load_imbalance = vm["expert-load-imbalance"].as<double>();
  if (!(o.expert_load_imbalance >= 1.0)) {
    throw InputError("--expert-load-imbalance", "expected a number of at least 1");
  }
  if (vm.count("engine") != 0) {
    o.engine = load_engine_file(Catalog(context.data_root / "engines", "engine", "--engine")
                                    .resolve(vm["engine"].as<std::string>()))
                   .costs;
  }
  return o;
}

// --generate, or the batch of --decode-batch, --context, --prefill-tokens, --prefill-context
// and --speculative.
RooflineQuery roofline_query_from(const po::variables_map& vm) {
  RooflineQuery query;
  if (const auto generate = integer_flag(vm, "generate", 1)) {
    query.generate =
        RooflineQuery::Generation{integer_flag(vm, "prefill-tokens", 1).value_or(128), *generate};
  } else {
    const auto decode_batch = integer_flag(vm, "decode-batch", 0);
    const auto prefill_tokens = integer_flag(vm, "prefill-tokens", 0);
    RooflineBatch& batch = query.batch;
    batch.decode_context_tokens = *integer_flag(vm, "context", 1);
    batch.prefill_context_tokens = *integer_flag(vm, "prefill-context", 0);
    batch.decode_sequences = decode_batch.value_or(prefill_tokens ? 0 : 32);
    batch.prefill_tokens = prefill_tokens.value_or(0);
    batch.speculative_tokens = integer_flag(vm, "speculative", 1).value_or(0);
    if (batch.shape().empty()) {
      throw UsageError("the batch is empty: give --decode-batch or --prefill-tokens");
    }
  }
  return query;
}

// The model, hardware, parallelism and dtypes priced, and the peak balance point.
void print_roofline_setup(std::ostream& out, const ModelSpec& model,
                          const HardwareProfile& hardware, const RooflineOptions& o,
                          const RooflineModel& roofline) {
  out << model.name << " on " << hardware.name << ", TP " << o.parallelism.tensor << ", PP "
      << o.parallelism.pipeline
      << (o.parallelism.data > 1 ? ", DP attention " + std::to_string(o.parallelism.data) +
                                       " ranks (the busiest rank's share of the batch)"
                                 : "")
      << (o.parallelism.expert ? ", EP " + std::to_string(o.parallelism.expert_degree()) : "")
      << ", weights " << dtype_name(o.weight_dtype) << ", KV " << dtype_name(o.kv_dtype)
      << ", compute " << dtype_name(roofline.compute_dtype())
      << "\nPeak balance point: " << format_fixed(roofline.peak_balance_flops_per_byte(), 1)
      << " FLOP/B (" << format_si(hardware.peak_flops(roofline.compute_dtype()), "FLOP/s") << " / "
      << format_si(hardware.memory_bandwidth_bytes_per_s, "B/s") << ")\n";
}

// --generate: the generation with and without a KV cache.
void print_generation(std::ostream& out, const RooflineModel& roofline,
                      const RooflineQuery::Generation& generation) {
  const GenerationComparison g =
      compare_generation(roofline, generation.prompt_tokens, generation.generated_tokens);
  out << "Generating " << format_count(static_cast<double>(g.generated_tokens))
      << " tokens after a " << format_count(static_cast<double>(g.prompt_tokens))
      << "-token prompt (one sequence):\n";
  Table table({"", "TFLOP", "time"});
  table.add_row({"with KV cache", format_fixed(g.with_cache.flops / 1e12, 3),
                 format_seconds(g.with_cache.time_s)});
  table.add_row({"without (recompute)", format_fixed(g.without_cache.flops / 1e12, 3),
                 format_seconds(g.without_cache.time_s)});
  table.print(out);
  out << "Recomputing costs " << format_fixed(g.without_cache.flops / g.with_cache.flops, 1)
      << "x the FLOPs and " << format_fixed(g.without_cache.time_s / g.with_cache.time_s, 1)
      << "x the time: without a cache the work per token grows with the sequence, so the total\n"
         "grows quadratically in the tokens generated; with it, each step reads the stored K "
         "and V instead.\n";
}

// One iteration of `batch`, operator by operator; a verification also against a plain step.
void print_batch_cost(std::ostream& out, const RooflineModel& roofline,
                      const RooflineBatch& batch) {
  const BatchShape shape = batch.shape(roofline.attention_spans());
  const IterationCost cost = roofline.estimate(shape);
  out << "Batch: ";
  const std::int64_t drafts = batch.speculative_tokens;
  if (drafts > 0) {
    out << batch.decode_sequences << " sequences verifying " << drafts << " drafts each ("
        << drafts + 1 << " query tokens) at " << batch.decode_context_tokens
        << " tokens of context";
  } else if (shape.decode_sequences > 0) {
    out << shape.decode_sequences << " decoding sequences at " << batch.decode_context_tokens
        << " tokens of context";
  }
  if (batch.prefill_tokens > 0) {
    out << (batch.decode_sequences > 0 ? ", " : "") << "one prefill of " << batch.prefill_tokens
        << " tokens after " << batch.prefill_context_tokens << " cached";
  }
  out << "\n\n";
  print_cost(out, cost, roofline.gemm_choices(shape));
  if (drafts > 0) {
    RooflineBatch plain = batch;
    plain.speculative_tokens = 0;
    const double plain_s = roofline.estimate(plain.shape(roofline.attention_spans())).total_time_s;
    out << "A plain decode step of the same batch takes " << format_seconds(plain_s)
        << "; this verification takes " << format_fixed(cost.total_time_s / plain_s, 2)
        << "x as long:\nspeculation pays only when a step emits more tokens per sequence than "
           "that, and more\nstill once proposing is counted; with acceptance a, a step emits "
           "(1 - a^"
        << drafts + 1 << ") / (1 - a).\n";
  }
}

}  // namespace

int run_roofline(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()(
      "model", po::value<std::string>()->value_name("NAME|PATH")->default_value("llama-3-8b"),
      "model short name or path to a Hugging Face config.json")(
      "hw", po::value<std::string>()->value_name("NAME|PATH")->default_value("h100-sxm"),
      "hardware profile name or path")(
      "decode-batch", po::value<std::int64_t>()->value_name("B"),
      "sequences decoding one token each (default 32 when neither shape option is given)")(
      "context", po::value<std::int64_t>()->value_name("TOKENS")->default_value(1024),
      "context length of each decoding sequence, tokens, new token included")(
      "prefill-tokens", po::value<std::int64_t>()->value_name("N"),
      "prompt tokens prefilled in the iteration (one sequence); with --generate: the prompt "
      "length (default 128)")("prefill-context",
                              po::value<std::int64_t>()->value_name("TOKENS")->default_value(0),
                              "tokens already cached before the prefill chunk (chunked prefill)")(
      "generate", po::value<std::int64_t>()->value_name("M"),
      "compare generating this many tokens with and without a KV cache")(
      "speculative", po::value<std::int64_t>()->value_name("K"),
      "each decoding sequence verifies K draft tokens: a speculative step of K + 1 query "
      "tokens over its context, compared with a plain decode step")(
      "engine", po::value<std::string>()->value_name("NAME|PATH"),
      "add an engine's costs (engines/): its host work, CUDA-graph padding and kernel factors "
      "(default: none, the device time alone)")(
      "expert-load-imbalance", po::value<double>()->value_name("F")->default_value(1.0),
      "with --enable-expert-parallel: the busiest GPU's routed tokens over the even share")(
      "json", "print one JSON object instead of tables");
  add_parallelism_options(options);
  add_dtype_options(options);
  const auto vm = parse_options(
      context, options, "servesim roofline [options]",
      "Prices one iteration operator by operator with the roofline model the simulator uses:\n"
      "FLOPs, bytes moved, arithmetic intensity, the bound that applies and the time.\n"
      "Example: servesim roofline --model llama-2-70b --hw a100-80gb --tp 4 --decode-batch 64");
  if (!vm) return 0;

  const ModelSpec model = load_model((*vm)["model"].as<std::string>(), context);
  const HardwareProfile hardware = load_hardware((*vm)["hw"].as<std::string>(), context);
  const RooflineOptions o = roofline_options_from(*vm, model, context);
  const RooflineQuery query = roofline_query_from(*vm);
  std::ostream& out = context.out;
  if (vm->count("json") != 0) {
    out << roofline_report(model, hardware, o, query).dump(2) << '\n';
    return 0;
  }

  const RooflineModel roofline(model, hardware, o);
  print_roofline_setup(out, model, hardware, o, roofline);
  if (query.generate) {
    print_generation(out, roofline, *query.generate);
  } else {
    print_batch_cost(out, roofline, query.batch);
  }
  return 0;
}

}  // namespace servesim::cli
