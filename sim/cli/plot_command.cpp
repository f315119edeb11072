#include "sim/cli/command.h"
#include "sim/core/error.h"

namespace servesim::cli {

int run_plot(CommandContext& /*context*/) {
  throw UsageError("servesim plot is not built yet");
}

}  // namespace servesim::cli
