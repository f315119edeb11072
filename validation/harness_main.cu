// servesim-harness: measures operators on a real GPU so that the simulator's hardware
// profiles can be calibrated against them. Exit codes (also in README.md): 0 ok, 1 CUDA
// error, failed verification or unwritable output, 2 usage or input error, 10 no CUDA
// device. 10 is distinct so that scripts on CPU-only hosts can skip instead of failing.
#include <cuda_runtime.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/config/catalog.h"
#include "sim/core/error.h"
#include "validation/device_support.cuh"
#include "validation/harness_commands.cuh"
#include "validation/harness_options.h"
#include "validation/harness_plan.h"

namespace {

namespace sv = servesim::validation;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 10;

// The host half of a subcommand: every input is read and checked before the device is
// touched, so bad input gives the same error on machines with and without a GPU.
struct Plans {
  sv::GemmPlan gemm;
  sv::AttentionPlan attention;
  sv::ReplayPlan replay;
  sv::QuantGemmPlan quant_gemm;
  sv::MoeGemmPlan moe_gemm;
};

Plans plan(const sv::HarnessOptions& options, const std::filesystem::path& data_root) {
  Plans plans;
  switch (options.command) {
    case sv::HarnessCommand::Gemm:
      plans.gemm = sv::plan_gemms(options, data_root);
      break;
    case sv::HarnessCommand::Attention:
      plans.attention = sv::plan_attention(options, data_root);
      break;
    case sv::HarnessCommand::Replay:
      plans.replay = sv::plan_replay(options, data_root);
      if (!plans.replay.exact_shapes) {
        std::cerr << "servesim-harness: " << options.iterations_path
                  << " lacks the batch-shape columns; replaying shapes reconstructed from its "
                     "token counts (see validation/README.md)\n";
      }
      break;
    case sv::HarnessCommand::QuantGemm:
      plans.quant_gemm = sv::plan_quant_gemms(options, data_root);
      break;
    case sv::HarnessCommand::MoeGemm:
      plans.moe_gemm = sv::plan_moe_gemms(options, data_root);
      break;
    case sv::HarnessCommand::Bandwidth:
    case sv::HarnessCommand::Help:
      break;
  }
  return plans;
}

std::vector<sv::HarnessRecord> records_of(std::vector<sv::Measurement> measurements) {
  std::vector<sv::HarnessRecord> records;
  for (sv::Measurement& m : measurements)
    records.push_back({std::move(m), nlohmann::json::object()});
  return records;
}

std::vector<sv::HarnessRecord> measure(const sv::HarnessOptions& options, const Plans& plans) {
  switch (options.command) {
    case sv::HarnessCommand::Bandwidth:
      return records_of(sv::measure_bandwidth(options));
    case sv::HarnessCommand::Gemm:
      return records_of(sv::measure_gemms(options, plans.gemm));
    case sv::HarnessCommand::Attention:
      return records_of(sv::measure_attention(options, plans.attention));
    case sv::HarnessCommand::Replay:
      return records_of(sv::replay_iterations(options, plans.replay));
    case sv::HarnessCommand::QuantGemm:
      return sv::measure_quant_gemms(options, plans.quant_gemm);
    case sv::HarnessCommand::MoeGemm:
      return sv::measure_moe_gemms(options, plans.moe_gemm);
    case sv::HarnessCommand::Help:
      break;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  sv::HarnessOptions options;
  Plans plans;
  std::ofstream file;
  try {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    options = sv::parse_harness_args(args);
    if (options.command == sv::HarnessCommand::Help) {
      std::cout << sv::harness_usage();
      return kExitOk;
    }
    std::error_code ec;
    auto executable = std::filesystem::canonical("/proc/self/exe", ec);
    if (ec) executable = argv[0];
    plans = plan(options, servesim::locate_data_root(std::getenv("SERVESIM_DATA_DIR"), executable));
  } catch (const servesim::UsageError& error) {
    std::cerr << "servesim-harness: " << error.what() << " (see --help)\n";
    return kExitUsage;
  } catch (const servesim::Error& error) {  // input errors: unknown model, bad iterations.csv
    std::cerr << "servesim-harness: " << error.what() << '\n';
    return kExitUsage;
  }
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::cerr << "servesim-harness: no CUDA device found\n";
    return kExitNoDevice;
  }
  try {
    // Open the output first: an unwritable path should fail before minutes of measuring.
    if (!options.out_path.empty()) {
      file.open(options.out_path);
      if (!file) throw sv::HarnessFailure("cannot open " + options.out_path + " for writing");
    }
    std::ostream& out = options.out_path.empty() ? std::cout : file;
    const std::vector<sv::HarnessRecord> records = measure(options, plans);
    sv::write_harness_json(out, sv::device_name(), records);
    if (!out.flush()) throw sv::HarnessFailure("cannot write the JSON output");
    return kExitOk;
  } catch (const std::exception& error) {
    std::cerr << "servesim-harness: " << error.what() << '\n';
    return kExitFailure;
  }
}
