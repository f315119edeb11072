#include "validation/harness_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "sim/core/error.h"

namespace servesim::validation {
namespace {

constexpr std::string_view kUsage =
    R"(usage: servesim-harness SUBCOMMAND [options]

Measures operators on CUDA device 0 (choose another with CUDA_VISIBLE_DEVICES) and writes
servesim-measurements JSON, which `servesim calibrate` and `servesim validate` read. Every
kernel is checked against a CPU reference on fresh random data before it is timed.

subcommands:
  bandwidth   device-to-device copy bandwidth (copy kernel and cudaMemcpy)
              [--bytes N]
  gemm        cuBLAS GEMMs of one layer of a model's TP shard (qkv, o, mlp_up, mlp_down)
              and its LM head, per token count
              --model M [--tp T] [--tokens 1,16,128,1024] [--dtype bf16|fp16|fp8]
              [--timing per_call|stream|graph] [--calls 20]
              (--timing: one call between events, the default; or the mean of --calls
              back-to-back calls per sample, on a stream or replayed from a CUDA graph;
              --dtype fp8: e4m3 activations and weights, per-tensor scales, bf16 output,
              through cuBLASLt, without the LM head)
  attention   decode attention over a contiguous and a paged KV cache holding the same
              data, and prefill attention (causal, after a cached prefix)
              --model M [--tp T] [--batch 1,8,32] [--context 512,2048] [--block-size 16]
              [--chunk 128,512] [--prefill-context 0,1024] [--dtype bf16|fp16]
  replay      replays the batch shapes of a servesim run's iterations.csv with real
              kernels for every layer of the model's shard (random weights) and reports
              measured against predicted iteration time
              --model M --iterations FILE [--tp T] [--pp P] [--max-iterations 50]
              [--decode-context-tokens N] [--block-size 16] [--dtype bf16|fp16]
              (--decode-context-tokens: tokens per decoding sequence, only for files
              written before iterations.csv had a decode_context_tokens column)
  quant-gemm  GEMV-sized GEMMs of one layer with narrow weights on CUDA cores: int4
              weight-only (packed codes, 16-bit scale per group, 16-bit activations) and
              fp8 e4m3 weights and activations (per-tensor scales)
              --model M [--tp T] [--tokens 1,2,4,8,16 (at most 64)] [--formats int4,fp8]
              [--group-size 128] [--dtype bf16|fp16]
  moe-gemm    grouped MoE expert GEMM (mlp_up, mlp_down): tokens routed top-k from a seed,
              one launch over the touched experts, each expert's rows padded to the tile
              --model M (a mixture of experts) [--tp T] [--tokens 1,4,16,64,256]
              [--tile-rows 16 (16, 32 or 64; a list)] [--seed 1] [--dtype bf16|fp16]

options for every subcommand:
  --repeats R   timed repeats after warm-up; median, min and max are reported
                (default 20; replay 5)
  --out FILE    write the JSON result to FILE (default: standard output)
  -h, --help    print this help

exit codes: 0 ok, 1 CUDA error, failed verification or unwritable output,
            2 usage error, 10 no CUDA device found
)";

constexpr std::uint64_t kMaxTokens = 1ull << 20;

std::uint64_t parse_integer(std::string_view flag, std::string_view text, std::uint64_t min,
                            std::uint64_t max) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc{} || ptr != end || value < min || value > max) {
    throw UsageError(std::string(flag) + " expects an integer in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got '" + std::string(text) + "'");
  }
  return value;
}

std::vector<std::int64_t> parse_list(std::string_view flag, std::string_view text,
                                     std::uint64_t min, std::uint64_t max) {
  std::vector<std::int64_t> values;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    values.push_back(static_cast<std::int64_t>(
        parse_integer(flag, text.substr(start, comma - start), min, max)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

std::uint64_t max_tokens(HarnessCommand command) {
  if (command == HarnessCommand::QuantGemm) return kMaxQuantGemmTokens;
  if (command == HarnessCommand::MoeGemm) return kMaxMoeTokens;
  return kMaxTokens;
}

bool names_fp8(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "fp8" || lower == "e4m3";
}

// --dtype: the 16-bit formats for every subcommand, fp8 for gemm only.
void apply_dtype(HarnessOptions& o, std::string_view command_name, std::string_view flag,
                 std::string_view value) {
  const bool gemm = o.command == HarnessCommand::Gemm;
  if (names_fp8(value)) {
    if (!gemm) {
      throw UsageError(std::string(command_name) + ": " + std::string(flag) +
                       " fp8 is measured by gemm only (quant-gemm: --formats fp8); " +
                       std::string(command_name) + " takes bf16 or fp16");
    }
    o.fp8 = true;
    o.dtype = ElementType::BF16;  // the output
    return;
  }
  if (gemm) {
    try {
      o.dtype = parse_element_type(value, flag);
    } catch (const UsageError&) {
      throw UsageError(std::string(flag) + " expects bf16, fp16 or fp8, got '" +
                       std::string(value) + "'");
    }
    o.fp8 = false;
    return;
  }
  o.dtype = parse_element_type(value, flag);
}

TimingMode parse_timing(std::string_view flag, std::string_view text) {
  for (const TimingMode mode : {TimingMode::PerCall, TimingMode::Stream, TimingMode::Graph}) {
    if (text == timing_mode_name(mode)) return mode;
  }
  throw UsageError(std::string(flag) + " expects per_call, stream or graph, got '" +
                   std::string(text) + "'");
}

std::vector<WeightFormat> parse_formats(std::string_view flag, std::string_view text) {
  std::vector<WeightFormat> formats;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const WeightFormat format = parse_weight_format(text.substr(start, comma - start), flag);
    if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
      formats.push_back(format);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return formats;
}

struct Subcommand {
  std::string_view name;
  HarnessCommand command;
  std::vector<std::string_view> flags;
};

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> list = {
      {"bandwidth", HarnessCommand::Bandwidth, {"--bytes"}},
      {"gemm",
       HarnessCommand::Gemm,
       {"--model", "--tp", "--tokens", "--dtype", "--timing", "--calls"}},
      {"attention",
       HarnessCommand::Attention,
       {"--model", "--tp", "--batch", "--context", "--block-size", "--chunk", "--prefill-context",
        "--dtype"}},
      {"replay",
       HarnessCommand::Replay,
       {"--model", "--tp", "--pp", "--iterations", "--max-iterations", "--decode-context-tokens",
        "--block-size", "--dtype"}},
      {"quant-gemm",
       HarnessCommand::QuantGemm,
       {"--model", "--tp", "--tokens", "--formats", "--group-size", "--dtype"}},
      {"moe-gemm",
       HarnessCommand::MoeGemm,
       {"--model", "--tp", "--tokens", "--tile-rows", "--seed", "--dtype"}},
  };
  return list;
}

void apply(HarnessOptions& o, std::string_view command_name, std::string_view flag,
           std::string_view value) {
  if (flag == "--out") o.out_path = value;
  if (flag == "--repeats") o.repeats = static_cast<int>(parse_integer(flag, value, 1, 100000));
  if (flag == "--bytes") o.size_bytes = parse_integer(flag, value, 1, 1ull << 40);
  if (flag == "--model") o.model = value;
  if (flag == "--tp") o.tp = static_cast<std::int64_t>(parse_integer(flag, value, 1, 1024));
  if (flag == "--pp") o.pp = static_cast<std::int64_t>(parse_integer(flag, value, 1, 1024));
  if (flag == "--dtype") apply_dtype(o, command_name, flag, value);
  if (flag == "--tokens") o.tokens = parse_list(flag, value, 1, max_tokens(o.command));
  if (flag == "--batch") o.batch = parse_list(flag, value, 1, 65536);
  if (flag == "--context") o.context_tokens = parse_list(flag, value, 1, kMaxTokens);
  if (flag == "--block-size") {
    o.block_size = static_cast<std::int64_t>(parse_integer(flag, value, 0, 4096));
  }
  if (flag == "--chunk") o.chunk_tokens = parse_list(flag, value, 1, kMaxTokens);
  if (flag == "--prefill-context")
    o.prefill_context_tokens = parse_list(flag, value, 0, kMaxTokens);
  if (flag == "--iterations") o.iterations_path = value;
  if (flag == "--max-iterations") o.max_iterations = parse_integer(flag, value, 1, 1000000);
  if (flag == "--decode-context-tokens") {
    o.decode_context_tokens = static_cast<std::int64_t>(parse_integer(flag, value, 1, kMaxTokens));
  }
  if (flag == "--timing") o.timing = parse_timing(flag, value);
  if (flag == "--calls") o.calls = static_cast<int>(parse_integer(flag, value, 1, 10000));
  if (flag == "--formats") o.formats = parse_formats(flag, value);
  if (flag == "--group-size") {
    o.group_size = static_cast<std::int64_t>(parse_integer(flag, value, 8, 65536));
    if (o.group_size % kInt4PerWord != 0) {
      throw UsageError(std::string(flag) + " expects a multiple of 8, got '" + std::string(value) +
                       "'");
    }
  }
  if (flag == "--tile-rows") {
    o.tile_rows = parse_list(flag, value, 1, 64);
    for (const std::int64_t rows : o.tile_rows) {
      if (rows != 16 && rows != 32 && rows != 64) {
        throw UsageError(std::string(flag) + " expects 16, 32 or 64, got '" + std::to_string(rows) +
                         "'");
      }
    }
  }
  if (flag == "--seed") o.seed = parse_integer(flag, value, 0, ~std::uint64_t{0});
}

}  // namespace

HarnessOptions parse_harness_args(std::span<const std::string_view> args) {
  HarnessOptions options;
  const std::string expected =
      "(expected bandwidth, gemm, attention, replay, quant-gemm or moe-gemm)";
  if (args.empty()) throw UsageError("missing subcommand " + expected);
  if (args[0] == "-h" || args[0] == "--help") return options;
  const auto sub = std::find_if(subcommands().begin(), subcommands().end(),
                                [&](const Subcommand& s) { return s.name == args[0]; });
  if (sub == subcommands().end()) {
    throw UsageError("unknown subcommand '" + std::string(args[0]) + "' " + expected);
  }
  const std::string name(sub->name);
  options.command = sub->command;
  if (options.command == HarnessCommand::Replay) options.repeats = 5;
  if (options.command == HarnessCommand::QuantGemm) options.tokens = {1, 2, 4, 8, 16};
  if (options.command == HarnessCommand::MoeGemm) options.tokens = {1, 4, 16, 64, 256};
  bool calls_given = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string_view flag = args[i];
    calls_given = calls_given || flag == "--calls";
    if (flag == "-h" || flag == "--help") {
      options.command = HarnessCommand::Help;
      return options;
    }
    const bool known = flag == "--out" || flag == "--repeats" ||
                       std::find(sub->flags.begin(), sub->flags.end(), flag) != sub->flags.end();
    if (!known) throw UsageError(name + ": unknown option '" + std::string(flag) + "'");
    if (i + 1 == args.size() || args[i + 1].empty()) {
      throw UsageError(name + ": " + std::string(flag) + " needs a value");
    }
    apply(options, name, flag, args[++i]);
  }
  if (options.command != HarnessCommand::Bandwidth && options.model.empty()) {
    throw UsageError(name + ": --model is required");
  }
  if (options.command == HarnessCommand::Replay && options.iterations_path.empty()) {
    throw UsageError(name + ": --iterations is required");
  }
  if (calls_given && options.timing == TimingMode::PerCall) {
    throw UsageError(name + ": --calls needs --timing stream or graph (per_call times one call)");
  }
  return options;
}

std::string_view timing_mode_name(TimingMode mode) noexcept {
  switch (mode) {
    case TimingMode::PerCall:
      return "per_call";
    case TimingMode::Stream:
      return "stream";
    case TimingMode::Graph:
      return "graph";
  }
  return "per_call";
}

std::string_view harness_usage() noexcept {
  return kUsage;
}

}  // namespace servesim::validation
