#include "sim/cli/options.h"

#include <string_view>

#include "sim/app/app.h"
#include "sim/config/catalog.h"
#include "sim/config/model_catalog.h"
#include "sim/core/error.h"
#include "sim/core/suggest.h"
#include "sim/model/model_loader.h"

namespace servesim::cli {
namespace {

// vllm bench serve's and vllm serve's flags that servesim has no flag for, with what to give
// instead.
struct ForeignFlag {
  std::string_view flag;
  const char* instead;
};
constexpr ForeignFlag kForeignFlags[] = {
    {"input-len", "--random-input-len N with --dataset-name random, or --prompt-tokens N"},
    {"output-len", "--random-output-len N with --dataset-name random, or --output-tokens N"},
    {"random-prefix-len", "a shared_prefix workload (--workload FILE, docs/workloads.md)"},
    {"ramp-up-strategy", "arrival stages (workload.arrival.stages, docs/workloads.md)"},
    {"ramp-up-start-rps", "arrival stages (workload.arrival.stages, docs/workloads.md)"},
    {"ramp-up-end-rps", "arrival stages (workload.arrival.stages, docs/workloads.md)"},
    {"result-filename", "--save-result FILE.json"},
    {"result-dir", "--save-result DIR/FILE.json"},
    {"served-model-name", "--model"},
    {"qps", "--rate (--request-rate)"},
    {"request-rate-per-s", "--rate (--request-rate)"},
    {"concurrency", "--max-concurrency"},
    {"backend", "nothing: servesim simulates the server (drop the flag)"},
    {"host", "nothing: servesim simulates the server (drop the flag)"},
    {"port", "nothing: servesim simulates the server (drop the flag)"},
    {"base-url", "nothing: servesim simulates the server (drop the flag)"},
    {"endpoint", "nothing: servesim simulates the server (drop the flag)"},
};

// "; did you mean --tensor-parallel-size?" for "--tensor-paralel-size=2", "; servesim's
// spelling: --rate (--request-rate)" for "--qps", or nothing.
std::string unknown_option_hint(const std::string& token, const po::options_description& all) {
  std::string name = token.substr(0, token.find('='));
  name.erase(0, name.find_first_not_of('-'));
  for (const ForeignFlag& f : kForeignFlags) {
    if (f.flag == name) return std::string("; servesim's spelling: ") + f.instead;
  }
  std::vector<std::string> flags;
  for (const auto& option : all.options()) {
    if (!option->long_name().empty()) flags.push_back(option->long_name());
  }
  const std::string hint = did_you_mean(name, flags, "--", "");
  return hint.empty() ? hint : "; " + hint;
}

// vLLM's switches that are servesim flags taking a value, with what to give instead.
constexpr ForeignFlag kSwitchesWithValues[] = {
    {"save-result",
     "servesim's --save-result takes the file to write: --save-result FILE.json (for vLLM's "
     "--save-result --result-filename FILE.json)"},
};

// A flag that takes a value followed by another flag (boost would take "--result-filename"
// as the value and refuse the word after it as "too many positional options"): the flag as
// given, and what to give instead.
void refuse_flag_as_value(const std::vector<std::string>& args,
                          const po::options_description& all) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& token = args[i];
    if (token.rfind("--", 0) != 0 || token.size() <= 2 || token.find('=') != std::string::npos) {
      continue;
    }
    const std::string name = token.substr(2);
    const auto* option = all.find_nothrow(name, false);
    if (option == nullptr || option->semantic()->min_tokens() == 0) continue;
    const bool next_is_flag =
        i + 1 == args.size() || (args[i + 1].rfind("--", 0) == 0 && args[i + 1].size() > 2);
    if (!next_is_flag) continue;
    for (const ForeignFlag& f : kSwitchesWithValues) {
      if (f.flag == name) throw po::error(token + ": " + f.instead);
    }
    if (i + 1 < args.size()) {
      throw po::error(token + ": expected a value, got the flag " +
                      args[i + 1].substr(0, args[i + 1].find('=')));
    }
  }
}

}  // namespace

std::optional<po::variables_map> parse_options(
    CommandContext& context, const po::options_description& options, const std::string& usage_line,
    const std::string& description, const po::positional_options_description* positional) {
  po::options_description all("", 100, 50);
  all.add_options()("help,h", "print this help and exit");
  all.add(options);
  po::variables_map vm;
  const po::positional_options_description none;
  refuse_flag_as_value(context.args, all);
  try {
    po::store(po::command_line_parser(context.args)
                  .options(all)
                  .positional(positional != nullptr ? *positional : none)
                  .run(),
              vm);
  } catch (const po::unknown_option& error) {
    throw po::error(error.what() + unknown_option_hint(error.get_option_name(), all));
  }
  if (vm.count("help") != 0) {
    context.out << "Usage: " << usage_line << "\n\n" << description << "\n\n" << all << '\n';
    return std::nullopt;
  }
  po::notify(vm);
  return vm;
}

void add_parallelism_options(po::options_description& options) {
  options.add_options()("tp", po::value<std::int64_t>()->value_name("T")->default_value(1),
                        "tensor-parallel degree (GPUs per layer); must divide the attention heads")(
      "pp", po::value<std::int64_t>()->value_name("P")->default_value(1),
      "pipeline-parallel degree (stages of consecutive layers)")(
      "tensor-parallel-size", po::value<std::int64_t>()->value_name("T"), "vLLM's name for --tp")(
      "pipeline-parallel-size", po::value<std::int64_t>()->value_name("P"), "vLLM's name for --pp")(
      "dp", po::value<std::int64_t>()->value_name("D")->default_value(1),
      "data-parallel attention ranks of an MoE model (with --enable-expert-parallel): D ranks of "
      "--tp GPUs, experts over all D x TP")(
      "data-parallel-size", po::value<std::int64_t>()->value_name("D"), "vLLM's name for --dp")(
      "enable-expert-parallel",
      "expert parallelism as vLLM's flag: MoE experts spread whole over the TP GPUs (EP size = "
      "TP)");
}

void add_dtype_options(po::options_description& options) {
  options.add_options()("weight-dtype",
                        po::value<std::string>()->value_name("DTYPE")->default_value("auto"),
                        "weight format: auto (the model's dtype or torch_dtype; refused for a "
                        "quantized checkpoint), fp32, bf16, fp16, fp8, int8, int4; "
                        "narrow formats quantize the layer matrices only")(
      "kv-dtype", po::value<std::string>()->value_name("DTYPE")->default_value("auto"),
      "KV-cache element format: auto (the model's 16-bit format), bf16, fp16, fp8, int8, int4")(
      "quantization", po::value<std::string>()->value_name("METHOD"),
      "vLLM's --quantization for --weight-dtype: fp8, fbgemm_fp8 (fp8); awq, awq_marlin, gptq, "
      "gptq_marlin (int4)")("kv-cache-dtype", po::value<std::string>()->value_name("DTYPE"),
                            "vLLM's --kv-cache-dtype for --kv-dtype: auto, float16, bfloat16, "
                            "fp8, fp8_e4m3, fp8_e5m2 (both fp8: one byte per element)");
}

std::string one_line(std::string_view message) {
  std::string line;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      line += c;
    } else if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else if (c == '\t') {
      line += "\\t";
    } else if (c == '\0') {
      line += "\\0";
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      line += "\\x";
      line += kHex[byte >> 4];
      line += kHex[byte & 0xf];
    }
  }
  if (line.size() <= kMaxErrorBytes) return line;
  // Both ends: the source comes first and what is wrong with it last. Cut between UTF-8
  // sequences, not inside one.
  const auto boundary = [&](std::size_t at) {
    while (at > 0 && (static_cast<unsigned char>(line[at]) & 0xc0) == 0x80)
      --at;
    return at;
  };
  const std::size_t head = boundary(kMaxErrorBytes / 2);
  const std::size_t tail = boundary(line.size() - kMaxErrorBytes / 2);
  return line.substr(0, head) + " ... (" + std::to_string(tail - head) + " bytes left out) ... " +
         line.substr(tail);
}

std::string given_flag(const po::variables_map& vm, const std::string& flag,
                       const std::string& vllm_name) {
  if (vm.count(vllm_name) == 0) return flag;
  if (vm.count(flag) != 0 && !vm[flag].defaulted()) {
    throw UsageError("--" + flag + " and --" + vllm_name + " are the same setting; give one");
  }
  return vllm_name;
}

ModelSpec load_model(const std::string& name_or_path, const CommandContext& context) {
  return load_catalog_model(context.data_root, name_or_path, "--model");
}

HardwareProfile load_hardware(const std::string& name_or_path, const CommandContext& context) {
  const Catalog catalog(context.data_root / "hw_profiles", "hardware profile", "--hw");
  return load_hardware_file(catalog.resolve(name_or_path));
}

std::optional<std::int64_t> integer_flag(const po::variables_map& vm, const std::string& name,
                                         std::int64_t minimum, std::int64_t maximum) {
  if (vm.count(name) == 0) return std::nullopt;
  const auto value = vm[name].as<std::int64_t>();
  if (value < minimum) {
    throw InputError("--" + name, "expected an integer of at least " + std::to_string(minimum) +
                                      ", got " + std::to_string(value));
  }
  if (value > maximum) {
    throw InputError("--" + name, "expected an integer of at most " + std::to_string(maximum) +
                                      ", got " + std::to_string(value));
  }
  return value;
}

Parallelism parallelism_from(const po::variables_map& vm) {
  Parallelism p;
  p.tensor = integer_flag(vm, given_flag(vm, "tp", "tensor-parallel-size"), 1).value_or(1);
  p.pipeline = integer_flag(vm, given_flag(vm, "pp", "pipeline-parallel-size"), 1).value_or(1);
  p.expert = vm.count("enable-expert-parallel") != 0;
  p.data = integer_flag(vm, given_flag(vm, "dp", "data-parallel-size"), 1).value_or(1);
  return p;
}

DType weight_dtype_from(const po::variables_map& vm, const ModelSpec& model) {
  const std::string flag = given_flag(vm, "weight-dtype", "quantization");
  const std::string text = flag == "quantization"
                               ? weight_dtype_for_vllm_quantization(vm[flag].as<std::string>())
                               : vm[flag].as<std::string>();
  if (text == "auto") return auto_weight_dtype(model);
  return parse_dtype(text, "--" + flag);
}

DType kv_dtype_from(const po::variables_map& vm, const ModelSpec& model) {
  const std::string flag = given_flag(vm, "kv-dtype", "kv-cache-dtype");
  const std::string text = flag == "kv-cache-dtype" ? kv_dtype_for_vllm(vm[flag].as<std::string>())
                                                    : vm[flag].as<std::string>();
  if (text == "auto") return auto_kv_dtype(model);
  return parse_kv_dtype(text, "--" + flag);
}

void add_plot_format_option(po::options_description& options) {
  options.add_options()("plot-format", po::value<std::string>()->value_name("LIST"),
                        "the files each figure renders to: png, svg, pdf, comma-separated "
                        "(default svg; the HTML report inlines the SVG, else the PNG)");
}

PlotFormats plot_formats_from(const po::variables_map& vm) {
  if (vm.count("plot-format") == 0) return kDefaultPlotFormats;
  return parse_plot_formats(vm["plot-format"].as<std::string>(), "--plot-format");
}

}  // namespace servesim::cli
