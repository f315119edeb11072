#include <nlohmann/json.hpp>

#include "sim/calibration/error_stats.h"
#include "sim/calibration/measurement_sources.h"
#include "sim/calibration/prediction.h"
#include "sim/cli/command.h"
#include "sim/cli/format.h"
#include "sim/cli/measurement_options.h"
#include "sim/cli/options.h"
#include "sim/core/error.h"

namespace servesim::cli {

int run_validate(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("hw", po::value<std::string>()->value_name("NAME|PATH")->required(),
                        "hardware profile whose predictions are checked")(
      "json", "print one JSON object instead of a table");
  add_measurement_options(options);
  const auto vm = parse_options(
      context, options, "servesim validate --hw PROFILE --measurements FILE_OR_DIR... [--json]",
      "Predicts every measured record with the profile, using the formulas the simulator\n"
      "prices iterations with, and reports per operator class: count, mean absolute\n"
      "percentage error (MAPE), median and max absolute error, and the signed bias\n"
      "(> 0: the profile predicts too slow). Iteration records resolve their model by name.\n"
      "Example: servesim validate --hw a100-80gb --vidur ../shared/data/profiles/vidur "
      "--device a100");
  if (!vm) return 0;
  const LoadedMeasurements loaded = measurements_from_options(*vm);
  const HardwareProfile hardware = load_hardware((*vm)["hw"].as<std::string>(), context);
  const ModelResolver models = [&](const std::string& name) { return load_model(name, context); };

  ErrorTable table;
  for (const Measurement& m : loaded.records)
    table.add(m.class_name(), predict_seconds(m, hardware, &models), m.median_s);
  const auto stats = table.summarize();

  if (vm->count("json") != 0) {
    nlohmann::json classes = nlohmann::json::object();
    for (const auto& [name, s] : stats)
      classes[name] = error_stats_to_json(s);
    const nlohmann::json doc = {{"hw", hardware.name},
                                {"files", loaded.files},
                                {"records", loaded.records.size()},
                                {"classes", classes}};
    context.out << doc.dump(2) << '\n';
    return 0;
  }
  context.out << "Predicting " << loaded.records.size() << " measured records from "
              << loaded.files.size() << " files with " << hardware.name << "\n\n";
  const auto percent = [](double f) { return format_fixed(100 * f, 1) + "%"; };
  Table out({"class", "count", "MAPE", "median |err|", "max |err|", "max % err", "bias"});
  for (const auto& [name, s] : stats) {
    out.add_row({name, format_count(static_cast<double>(s.count)), percent(s.mape),
                 format_seconds(s.median_abs_error_s), format_seconds(s.max_abs_error_s),
                 percent(s.max_ape), percent(s.bias)});
  }
  out.print(context.out);
  return 0;
}

}  // namespace servesim::cli
