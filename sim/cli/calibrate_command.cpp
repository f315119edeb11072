#include "sim/cli/command.h"
#include "sim/core/error.h"

namespace servesim::cli {

int run_calibrate(CommandContext& /*context*/) {
  throw UsageError("servesim calibrate is not built yet");
}

}  // namespace servesim::cli
