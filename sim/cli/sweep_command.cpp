#include "sim/cli/command.h"
#include "sim/core/error.h"

namespace servesim::cli {

int run_sweep(CommandContext& /*context*/) {
  throw UsageError("servesim sweep is not built yet");
}

}  // namespace servesim::cli
