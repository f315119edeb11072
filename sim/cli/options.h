#pragma once

#include <limits>
#include <optional>
#include <string>

#include <boost/program_options.hpp>

#include "sim/cli/command.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/model/dtype.h"
#include "sim/model/model_spec.h"
#include "sim/model/sharding.h"
#include "sim/study/gnuplot.h"

namespace servesim::cli {

namespace po = boost::program_options;

// Parses the subcommand's arguments strictly (unknown options and stray words are usage
// errors). Returns nullopt after printing help when --help was given. `positional` names the
// options bare words fill, for commands that take them.
std::optional<po::variables_map> parse_options(
    CommandContext& context, const po::options_description& options, const std::string& usage_line,
    const std::string& description, const po::positional_options_description* positional = nullptr);

// Options shared by the commands that price a model on a device, each also under vLLM's name
// (--tensor-parallel-size, --pipeline-parallel-size, --quantization, --kv-cache-dtype).
void add_parallelism_options(po::options_description& options);
void add_dtype_options(po::options_description& options);

// --plot-format LIST of the commands that draw figures: png, svg and pdf (default svg).
void add_plot_format_option(po::options_description& options);
PlotFormats plot_formats_from(const po::variables_map& vm);

ModelSpec load_model(const std::string& name_or_path, const CommandContext& context);
HardwareProfile load_hardware(const std::string& name_or_path, const CommandContext& context);
Parallelism parallelism_from(const po::variables_map& vm);
// "auto" means the model's own 16-bit format (torch_dtype), as vLLM does.
DType weight_dtype_from(const po::variables_map& vm, const ModelSpec& model);
DType kv_dtype_from(const po::variables_map& vm, const ModelSpec& model);

// An error message as one printable line: control characters (a newline or NUL byte from a
// file name or a JSON string) escaped as \n, \0, \xNN, and of a longer text its first and
// last kMaxErrorBytes / 2 bytes kept, so whatever the input held, the error the CLI prints is
// exactly one line of bounded length.
inline constexpr std::size_t kMaxErrorBytes = 4096;
std::string one_line(std::string_view message);

// Value of an optional integer flag, refusing values below `minimum` or above `maximum`.
std::optional<std::int64_t> integer_flag(
    const po::variables_map& vm, const std::string& name, std::int64_t minimum,
    std::int64_t maximum = std::numeric_limits<std::int64_t>::max());

// The name a setting was given under: vLLM's name for it when that was given, else `flag`
// (which may hold a default). Both given is a UsageError.
std::string given_flag(const po::variables_map& vm, const std::string& flag,
                       const std::string& vllm_name);

}  // namespace servesim::cli
