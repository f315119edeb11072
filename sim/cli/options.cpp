#include "sim/cli/options.h"

#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "sim/model/model_loader.h"

namespace servesim::cli {

std::optional<po::variables_map> parse_options(
    CommandContext& context, const po::options_description& options, const std::string& usage_line,
    const std::string& description, const po::positional_options_description* positional) {
  po::options_description all("", 100, 50);
  all.add_options()("help,h", "print this help and exit");
  all.add(options);
  po::variables_map vm;
  const po::positional_options_description none;
  po::store(po::command_line_parser(context.args)
                .options(all)
                .positional(positional != nullptr ? *positional : none)
                .run(),
            vm);
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
      "pipeline-parallel degree (stages of consecutive layers)");
}

void add_dtype_options(po::options_description& options) {
  options.add_options()("weight-dtype",
                        po::value<std::string>()->value_name("DTYPE")->default_value("auto"),
                        "weight format: auto (the model's dtype or torch_dtype; refused for a "
                        "quantized checkpoint), fp32, bf16, fp16, fp8, int8, int4; "
                        "narrow formats quantize the layer matrices only")(
      "kv-dtype", po::value<std::string>()->value_name("DTYPE")->default_value("auto"),
      "KV-cache element format: auto (the model's 16-bit format), bf16, fp16, fp8, int8, int4");
}

ModelSpec load_model(const std::string& name_or_path, const CommandContext& context) {
  const Catalog catalog(context.data_root / "models", "model", "--model");
  return load_model_file(catalog.resolve(name_or_path));
}

HardwareProfile load_hardware(const std::string& name_or_path, const CommandContext& context) {
  const Catalog catalog(context.data_root / "hw_profiles", "hardware profile", "--hw");
  return load_hardware_file(catalog.resolve(name_or_path));
}

std::optional<std::int64_t> integer_flag(const po::variables_map& vm, const char* name,
                                         std::int64_t minimum) {
  if (vm.count(name) == 0) return std::nullopt;
  const auto value = vm[name].as<std::int64_t>();
  if (value < minimum) {
    throw InputError(std::string("--") + name, "expected an integer of at least " +
                                                   std::to_string(minimum) + ", got " +
                                                   std::to_string(value));
  }
  return value;
}

Parallelism parallelism_from(const po::variables_map& vm) {
  Parallelism p;
  p.tensor = integer_flag(vm, "tp", 1).value_or(1);
  p.pipeline = integer_flag(vm, "pp", 1).value_or(1);
  return p;
}

DType weight_dtype_from(const po::variables_map& vm, const ModelSpec& model) {
  const auto& text = vm["weight-dtype"].as<std::string>();
  if (text == "auto") return auto_weight_dtype(model);
  return parse_dtype(text, "--weight-dtype");
}

DType kv_dtype_from(const po::variables_map& vm, const ModelSpec& model) {
  const auto& text = vm["kv-dtype"].as<std::string>();
  if (text == "auto") return model.native_dtype == DType::FP32 ? DType::FP16 : model.native_dtype;
  return parse_kv_dtype(text, "--kv-dtype");
}

}  // namespace servesim::cli
