#include "sim/cli/measurement_options.h"

#include <filesystem>
#include <string>
#include <vector>

namespace servesim::cli {

void add_measurement_options(po::options_description& options) {
  options.add_options()(
      "measurements",
      po::value<std::vector<std::string>>()->value_name("FILE_OR_DIR")->multitoken(),
      "servesim-measurements JSON files, vidur CSV tables, or folders of them")(
      "vidur", po::value<std::string>()->value_name("DIR"),
      "vidur's profiles folder (compute/, attention_history/, network/, ...): import the "
      "tables of --device")("device", po::value<std::string>()->value_name("NAME"),
                            "vidur device folder: a100, h100 (with --vidur; labels CSV records)");
}

LoadedMeasurements measurements_from_options(const po::variables_map& vm) {
  std::vector<std::filesystem::path> inputs;
  if (vm.count("measurements") != 0) {
    for (const auto& p : vm["measurements"].as<std::vector<std::string>>())
      inputs.emplace_back(p);
  }
  return load_measurement_inputs(inputs, vm.count("vidur") ? vm["vidur"].as<std::string>() : "",
                                 vm.count("device") ? vm["device"].as<std::string>() : "");
}

}  // namespace servesim::cli
