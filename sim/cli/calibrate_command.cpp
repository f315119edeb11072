#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/calibration/calibrate.h"
#include "sim/calibration/measurement_sources.h"
#include "sim/calibration/vidur_import.h"
#include "sim/cli/command.h"
#include "sim/cli/format.h"
#include "sim/cli/measurement_options.h"
#include "sim/cli/options.h"
#include "sim/core/error.h"

namespace servesim::cli {
namespace {

std::string percent(double fraction) {
  return format_fixed(100 * fraction, 1) + "%";
}

void print_report(std::ostream& out, const CalibrationReport& report) {
  Table table({"class", "records", "fit MAPE", "fit max", "held-out MAPE", "held-out max", "bias",
               "held out by"},
              {7});
  for (const auto& [name, fit] : report.fit) {
    const auto held = report.holdout.find(name);
    const bool has = held != report.holdout.end();
    const auto method = report.method.find(name);
    table.add_row({name, format_count(static_cast<double>(fit.count)), percent(fit.mape),
                   percent(fit.max_ape), has ? percent(held->second.mape) : "-",
                   has ? percent(held->second.max_ape) : "-",
                   has ? percent(held->second.bias) : "-",
                   method != report.method.end() ? method->second : "-"});
  }
  table.print(out);
  const auto ceilings = [&](const char* name, const KernelCeilings& k) {
    out << "  " << name << ": compute " << format_fixed(k.compute_efficiency, 3)
        << " x size/(size + " << format_fixed(k.compute_half_size, 1) << "), memory "
        << format_fixed(k.memory_efficiency, 3) << " x size/(size + "
        << format_fixed(k.memory_half_size, 1) << "), fixed " << format_seconds(k.fixed_s)
        << ", masked-pair weight " << format_fixed(k.masked_pair_weight, 2);
    if (k.quantization_weight > 0) {
      out << ", quantization weight " << format_fixed(k.quantization_weight, 3) << " ("
          << format_fixed(k.tile_m, 0) << "x" << format_fixed(k.tile_n, 0) << " tiles)";
    }
    out << "\n";
  };
  const HardwareProfile& p = report.profile;
  out << "\nCeilings of " << p.name << " (fractions of the datasheet peaks):\n";
  ceilings("gemm (size = tokens)", p.kernels.gemm);
  for (const GemmOperator op : kGemmOperators) {
    const auto& own = p.kernels.gemm_operators[static_cast<std::size_t>(op)];
    if (own) ceilings(("gemm_" + std::string(gemm_operator_name(op))).c_str(), *own);
  }
  ceilings("decode_attention (size = sequences)", p.kernels.decode_attention);
  ceilings("prefill_attention (size = chunk tokens)", p.kernels.prefill_attention);
  out << "  collectives: link " << format_fixed(p.efficiency.gpu_link, 3) << ", latency "
      << format_seconds(p.overheads.collective_latency_s) << "\n";
}

}  // namespace

int run_calibrate(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("base", po::value<std::string>()->value_name("NAME|PATH")->required(),
                        "hardware profile to start from: datasheet figures, unfitted parameters")(
      "out", po::value<std::string>()->value_name("FILE")->required(),
      "where to write the calibrated profile (JSON)")(
      "name", po::value<std::string>()->value_name("NAME"),
      "name of the calibrated profile (default: the base profile's)")(
      "json", "print the fit report as JSON instead of a table");
  add_measurement_options(options);
  const auto vm = parse_options(
      context, options,
      "servesim calibrate --measurements FILE_OR_DIR... --base PROFILE --out FILE",
      "Fits a hardware profile to measured operator times (least squares of relative errors):\n"
      "achieved GEMM and attention ceilings as functions of the kernel size, fixed per-kernel\n"
      "costs and alpha-beta collectives (host costs are the engine's); reports the residuals and "
      "the\n"
      "leave-one-model-out error. Measurements: servesim-measurements JSON (docs/measurements.md)\n"
      "or vidur CSV tables.\n"
      "Example: servesim calibrate --vidur ../shared/data/profiles/vidur --device a100 \\\n"
      "           --base a100-80gb --out a100-80gb.json");
  if (!vm) return 0;
  const LoadedMeasurements loaded = measurements_from_options(*vm);
  const HardwareProfile base = load_hardware((*vm)["base"].as<std::string>(), context);
  CalibrationReport report = calibrate(loaded.records, base, loaded.files);
  if (vm->count("name") != 0) report.profile.name = (*vm)["name"].as<std::string>();

  const std::string out_path = (*vm)["out"].as<std::string>();
  const nlohmann::json document = hardware_to_json(report.profile);
  hardware_from_json(document, out_path);  // what is written must load
  std::ofstream file(out_path, std::ios::binary);
  if (!file) throw InputError("--out", "cannot write " + out_path);
  file << document.dump(2) << '\n';
  if (!file) throw InputError("--out", "write error on " + out_path);

  if (vm->count("json") != 0) {
    context.out << document.at("calibration").dump(2) << '\n';
    return 0;
  }
  context.out << "Fitted " << loaded.records.size() << " records from " << loaded.files.size()
              << " files to " << base.name << "; wrote " << out_path << "\n\n";
  print_report(context.out, report);
  return 0;
}

}  // namespace servesim::cli
