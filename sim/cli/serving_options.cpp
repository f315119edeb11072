#include "sim/cli/serving_options.h"

#include <unistd.h>

#include <fstream>

#include "sim/calibration/serving_prediction.h"
#include "sim/core/error.h"

namespace servesim::cli {

void add_serving_point_options(po::options_description& options) {
  options.add_options()(
      "measured", po::value<std::vector<std::string>>()->value_name("FILE")->multitoken(),
      "measured serving points: CSV files in the format of docs/validation.md, or vllm bench "
      "serve --save-result JSON files")(
      "setup", po::value<std::string>()->value_name("FILE"),
      "setup JSON giving the columns the files lack (default: validation/setups/<file stem>.json "
      "when shipped)")("engine", po::value<std::string>()->value_name("NAME|PATH"),
                       "engine every point runs with, over the files' and setups'")(
      "max-requests-per-point", po::value<std::int64_t>()->value_name("N"),
      "simulate a prefix of each stage: at most N requests (its duration cut to N / rate); "
      "bursts and replays their first N requests");
}

LoadedServingRuns load_serving_runs(const po::variables_map& vm, const CommandContext& context) {
  ServingPointOptions options;
  options.data_root = context.data_root;
  if (vm.count("setup") != 0) options.setup = vm["setup"].as<std::string>();
  if (vm.count("hw") != 0) options.hardware = vm["hw"].as<std::string>();
  if (vm.count("engine") != 0) options.engine = vm["engine"].as<std::string>();
  LoadedServingRuns loaded;
  loaded.run_options.max_requests_per_point = integer_flag(vm, "max-requests-per-point", 1);
  loaded.files = vm["measured"].as<std::vector<std::string>>();
  for (const auto& file : loaded.files) {
    auto points = read_serving_points(file, options);
    loaded.points += points.size();
    for (auto& run : group_serving_runs(std::move(points)))
      loaded.runs.push_back(std::move(run));
  }
  for (const ServingRun& run : loaded.runs)
    check_serving_run(run, context.data_root, loaded.run_options);
  return loaded;
}

// Writes `text` to `path` through a temporary file beside it, so that `path` is either the
// whole new file or what it was before.
void write_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path parent =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(parent, ec)) {
    throw InputError(path.string(), "cannot write: folder " + parent.string() + " not found");
  }
  const std::filesystem::path temporary =
      parent / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      throw InputError(path.string(), "cannot write");
    }
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw InputError(path.string(), "cannot write: " + ec.message());
  }
}

}  // namespace servesim::cli
