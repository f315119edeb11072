#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/calibration/calibrate.h"
#include "sim/calibration/engine_fit.h"
#include "sim/calibration/measurement_sources.h"
#include "sim/calibration/serving_prediction.h"
#include "sim/calibration/vidur_import.h"
#include "sim/cli/command.h"
#include "sim/cli/format.h"
#include "sim/cli/measurement_options.h"
#include "sim/cli/options.h"
#include "sim/cli/serving_options.h"
#include "sim/config/catalog.h"
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

// --select KEY=VALUE: the runs whose first point has that model, hardware, tp or engine.
void select_runs(const po::variables_map& vm, LoadedServingRuns& loaded) {
  if (vm.count("select") == 0) return;
  for (const std::string& choice : vm["select"].as<std::vector<std::string>>()) {
    const auto eq = choice.find('=');
    const std::string key = choice.substr(0, eq);
    if (eq == std::string::npos ||
        (key != "model" && key != "hardware" && key != "tp" && key != "engine")) {
      throw UsageError("--select: expected model=, hardware=, tp= or engine= and a value, got \"" +
                       choice + "\"");
    }
    const std::string value = choice.substr(eq + 1);
    std::erase_if(loaded.runs, [&](const ServingRun& run) {
      const ServingPoint& p = run.points.front();
      const std::string has = key == "model"      ? p.model
                              : key == "hardware" ? p.hardware
                              : key == "tp"       ? std::to_string(p.tp)
                                                  : p.engine.value_or("");
      return has != value;
    });
  }
  loaded.points = 0;
  for (const ServingRun& run : loaded.runs)
    loaded.points += run.points.size();
  if (loaded.points == 0) throw UsageError("--select: no measured point is selected");
}

// The hardware profile the hardware terms of a fit set: every selected point's.
HardwareProfile fitted_hardware(const LoadedServingRuns& loaded, const CommandContext& context) {
  std::set<std::string> names;
  for (const ServingRun& run : loaded.runs)
    names.insert(run.points.front().hardware);
  if (names.size() != 1) {
    throw UsageError(
        "hardware terms fit one hardware profile: select its points (--select hardware=NAME) or "
        "give --hw");
  }
  return load_hardware(*names.begin(), context);
}

// --select, --max-evaluations, --terms and --leave-out of an engine fit.
EngineFitOptions engine_fit_options(const po::variables_map& vm) {
  EngineFitOptions fit_options;
  if (vm.count("select") != 0) fit_options.selection = vm["select"].as<std::vector<std::string>>();
  if (vm.count("max-evaluations") != 0) {
    fit_options.max_evaluations = static_cast<int>(*integer_flag(vm, "max-evaluations", 1));
  }
  if (vm.count("terms") != 0) {
    fit_options.terms.clear();
    for (const auto& term : vm["terms"].as<std::vector<std::string>>())
      fit_options.terms.push_back(term);  // fit_engine refuses a term it cannot set
  }
  if (vm.count("leave-out") != 0) {
    const std::string name = vm["leave-out"].as<std::string>();
    const auto hold_out = hold_out_from_name(name);
    if (!hold_out) {
      throw UsageError("--leave-out: expected model, tp, hardware or engine, got \"" + name + "\"");
    }
    fit_options.hold_out = *hold_out;
  }
  return fit_options;
}

// Whether the fit sets hardware terms: all of its terms, or none.
bool fits_hardware_terms(const EngineFitOptions& fit_options) {
  const auto hardware_terms =
      std::count_if(fit_options.terms.begin(), fit_options.terms.end(),
                    [](const std::string& t) { return is_hardware_term(t); });
  const bool fits_hardware = hardware_terms > 0;
  if (fits_hardware && hardware_terms != static_cast<std::ptrdiff_t>(fit_options.terms.size())) {
    throw UsageError(
        "--terms: fit hardware terms (hardware.*) and engine terms apart: --out is one profile");
  }
  return fits_hardware;
}

// An engine fit starts from --engine, or from the one engine its points name; a hardware fit
// runs each point with the engine it names.
std::optional<std::string> fit_base_engine_name(const po::variables_map& vm,
                                                const LoadedServingRuns& loaded,
                                                bool fits_hardware) {
  std::optional<std::string> engine_name;
  if (vm.count("engine") != 0) {
    engine_name = vm["engine"].as<std::string>();
  } else if (!fits_hardware) {
    std::set<std::string> names;
    for (const ServingRun& run : loaded.runs)
      names.insert(run.points.front().engine.value_or(""));
    if (names.size() != 1 || names.begin()->empty()) {
      throw UsageError(
          "--measured needs --engine NAME|PATH, or points of one engine (--select "
          "engine=NAME)");
    }
    engine_name = *names.begin();
  }
  return engine_name;
}

// host_overhead records (vidur's cpu_overheads) give the host terms directly; the serving
// fit then leaves them alone.
void fit_host_terms_from_records(const po::variables_map& vm, EngineProfile& base,
                                 EngineFitOptions& fit_options) {
  if (vm.count("measurements") != 0 || vm.count("vidur") != 0) {
    const LoadedMeasurements records = measurements_from_options(vm);
    const EngineHostCosts host = fit_host_costs(records.records);
    base.costs.host.step_s = host.step_s;
    base.costs.host.per_sequence_s = host.per_sequence_s;
    for (const char* key : {"host.step_s", "host.per_sequence_s"}) {
      base.sources[key] =
          "fitted by servesim calibrate (least squares of relative errors) to "
          "the host_overhead records of " +
          std::to_string(records.files.size()) + " files";
      std::erase(fit_options.terms, std::string(key));
    }
  }
}

// Each evaluation of the fit: the measured points simulated with the terms' values, in
// `scratch`; `profiles_written` numbers the hardware profiles written there.
EngineTermsPredictor serving_terms_predictor(const po::variables_map& vm,
                                             const CommandContext& context,
                                             const LoadedServingRuns& loaded,
                                             const EngineFitOptions& fit_options,
                                             const EngineProfile& base,
                                             const ScratchFolder& scratch, int& profiles_written) {
  return [&](const std::vector<ServingRun>& runs, const std::vector<ConfigOverride>& terms) {
    ServingRunOptions run_options = loaded.run_options;
    // Hardware terms run every point on a profile written with them.
    const SplitAssignments split = split_hardware_assignments(terms);
    run_options.extra_overrides = split.others;
    if (!split.hardware_terms.empty()) {
      const auto path =
          scratch.path() / ("hardware_" + std::to_string(++profiles_written) + ".json");
      write_atomically(path,
                       hardware_with_terms(fit_options.hardware_base, split.hardware_terms).dump());
      run_options.extra_overrides.push_back(
          {"calibration", "hardware=" + nlohmann::json(path.string()).dump()});
    }
    if (vm.count("engine") != 0) {
      run_options.extra_overrides.insert(
          run_options.extra_overrides.begin(),
          {"--engine", "engine.name=" + nlohmann::json(base.source).dump()});
    }
    return validate_serving(runs, [&](const ServingRun& run) {
      return simulate_serving_run(run, context.data_root, scratch.path(), run_options);
    });
  };
}

// The console report of an engine (or hardware) fit: the terms and the errors.
void print_engine_fit(std::ostream& out, const EngineFitReport& report,
                      const EngineFitOptions& fit_options, const EngineProfile& base,
                      const LoadedServingRuns& loaded, bool fits_hardware,
                      const std::string& out_path) {
  const std::string fitted_name =
      fits_hardware ? fit_options.hardware_base.at("name").get<std::string>() : base.name;
  out << "Fitted " << fit_options.terms.size() << " terms of " << fitted_name << " to "
      << loaded.points << " measured points (" << report.evaluations
      << " simulations of every point); wrote " << out_path << "\n\n";
  Table terms({"term", "base", "fitted"}, {});
  for (const auto& [term, value] : report.terms) {
    const double before = is_hardware_term(term) ? hardware_term(fit_options.hardware_base, term)
                                                 : engine_term(base, term);
    terms.add_row({term, format_fixed(before, 7), format_fixed(value, 7)});
  }
  terms.print(out);
  out << "\nErrors (in sample, then leave one " << hold_out_name(fit_options.hold_out)
      << " out) over the points not measured overloaded:\n";
  Table errors(
      {"metric", "count", "fit MAPE", "fit max", "held-out MAPE", "held-out max", "held-out bias"},
      {});
  for (const auto& [metric, fit] : report.fitted.metrics) {
    const RelativeErrorStats* held = nullptr;
    for (const auto& [m, s] : report.held_out.metrics) {
      if (m == metric) held = &s;
    }
    if (fit.count == 0) continue;
    errors.add_row({std::string(serving_metric_name(metric)),
                    format_count(static_cast<double>(fit.count)), percent(fit.mape),
                    percent(fit.max_ape), held ? percent(held->mape) : "-",
                    held ? percent(held->max_ape) : "-", held ? percent(held->bias) : "-"});
  }
  errors.print(out);
}

// calibrate --measured: an engine's host costs and kernel factors, or a hardware profile's
// ceilings, fitted to serving points.
int calibrate_engine(const po::variables_map& vm, CommandContext& context) {
  if (vm.count("base") != 0)
    throw UsageError("--base is a hardware fit's; --measured fits --engine");
  LoadedServingRuns loaded = load_serving_runs(vm, context);
  select_runs(vm, loaded);
  EngineFitOptions fit_options = engine_fit_options(vm);
  const bool fits_hardware = fits_hardware_terms(fit_options);
  const std::optional<std::string> engine_name = fit_base_engine_name(vm, loaded, fits_hardware);
  EngineProfile base;
  if (engine_name) {
    base = load_engine_file(
        Catalog(context.data_root / "engines", "engine", "--engine").resolve(*engine_name));
  }
  if (fits_hardware) {
    if (fit_options.hold_out == HoldOut::Hardware) {
      throw UsageError("--leave-out hardware: hardware terms fit one hardware profile");
    }
    fit_options.hardware_base = hardware_to_json(fitted_hardware(loaded, context));
  }
  fit_host_terms_from_records(vm, base, fit_options);
  const ScratchFolder scratch;
  int profiles_written = 0;
  const EngineTermsPredictor predict =
      serving_terms_predictor(vm, context, loaded, fit_options, base, scratch, profiles_written);
  EngineFitReport report = fit_engine(loaded.runs, base, predict, fit_options, loaded.files);
  const std::string out_path = vm["out"].as<std::string>();
  nlohmann::json document;
  if (fits_hardware) {
    document = report.hardware;
    if (vm.count("name") != 0) document["name"] = vm["name"].as<std::string>();
    hardware_from_json(document, out_path);  // what is written must load
  } else {
    if (vm.count("name") != 0) report.engine.name = vm["name"].as<std::string>();
    document = engine_to_json(report.engine);
    engine_from_json(document, out_path);
  }
  write_atomically(out_path, document.dump(2) + "\n");

  if (vm.count("json") != 0) {
    context.out << (fits_hardware ? document.at("calibration").at("serving_fit")
                                  : document.at("calibration"))
                       .dump(2)
                << '\n';
    return 0;
  }
  print_engine_fit(context.out, report, fit_options, base, loaded, fits_hardware, out_path);
  return 0;
}

}  // namespace

int run_calibrate(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("base", po::value<std::string>()->value_name("NAME|PATH"),
                        "hardware profile to start from: datasheet figures, unfitted parameters")(
      "out", po::value<std::string>()->value_name("FILE")->required(),
      "where to write the calibrated profile (JSON)")(
      "name", po::value<std::string>()->value_name("NAME"),
      "name of the calibrated profile (default: the base profile's)")(
      "json", "print the fit report as JSON instead of a table");
  add_measurement_options(options);
  po::options_description serving("Engines fitted to serving points (--measured)", 100, 50);
  add_serving_point_options(serving);
  serving.add_options()("hw", po::value<std::string>()->value_name("NAME|PATH"),
                        "hardware profile every measured point runs on")(
      "terms", po::value<std::vector<std::string>>()->value_name("KEY")->multitoken(),
      "engine terms to fit (default: host.step_s host.per_sequence_s kernels.gemm_factor "
      "kernels.decode_attention_factor kernels.prefill_attention_factor "
      "kernels.all_reduce_latency_s); hardware.kernels.<class>.<ceiling> terms fit the "
      "points' hardware profile instead (docs/calibration.md)")(
      "select", po::value<std::vector<std::string>>()->value_name("KEY=VALUE"),
      "fit the points whose model, hardware, tp or engine is VALUE (repeatable: all must hold)")(
      "leave-out", po::value<std::string>()->value_name("GROUP"),
      "what each leave-one-out fold holds out: model (default), tp, hardware or engine")(
      "max-evaluations", po::value<std::int64_t>()->value_name("N"),
      "simulations of every point per fit (default 150)");
  options.add(serving);
  const auto vm = parse_options(
      context, options,
      "servesim calibrate --measurements FILE_OR_DIR... --base PROFILE --out FILE\n"
      "       servesim calibrate --measured FILE... --engine NAME --hw NAME --out FILE",
      "Fits a hardware profile to measured operator times (least squares of relative errors):\n"
      "achieved GEMM and attention ceilings as functions of the kernel size, fixed per-kernel\n"
      "costs and alpha-beta collectives (host costs are the engine's); reports the residuals and "
      "the\n"
      "leave-one-model-out error. Measurements: servesim-measurements JSON (docs/measurements.md)\n"
      "or vidur CSV tables.\n"
      "With --measured, fits an engine instead: its host costs and kernel factors, on top of the\n"
      "hardware profile, to measured serving points (docs/validation.md), by least squares of\n"
      "log relative errors of their mean TTFT, ITL and E2E (throughput where they measured no\n"
      "latency); reports the residuals\n"
      "and leave-one-model-out errors and writes the fitted engine with its provenance.\n"
      "host_overhead records given with it (--vidur ... --device) fit its host terms directly.\n"
      "Example: servesim calibrate --vidur ../shared/data/profiles/vidur --device a100 \\\n"
      "           --base a100-80gb --out a100-80gb.json");
  if (!vm) return 0;
  check_output_file("--out", (*vm)["out"].as<std::string>());  // before anything is fitted
  if (vm->count("measured") != 0) return calibrate_engine(*vm, context);
  if (vm->count("base") == 0) throw UsageError("--base is required (or --measured with --engine)");
  const LoadedMeasurements loaded = measurements_from_options(*vm);
  const HardwareProfile base = load_hardware((*vm)["base"].as<std::string>(), context);
  CalibrationReport report = calibrate(loaded.records, base, loaded.files);
  if (vm->count("name") != 0) report.profile.name = (*vm)["name"].as<std::string>();

  const std::string out_path = (*vm)["out"].as<std::string>();
  const nlohmann::json document = hardware_to_json(report.profile);
  hardware_from_json(document, out_path);  // what is written must load
  write_atomically(out_path, document.dump(2) + "\n");

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
