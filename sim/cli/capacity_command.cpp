#include "sim/cli/command.h"
#include "sim/core/error.h"

namespace servesim::cli {

int run_capacity(CommandContext& /*context*/) {
  throw UsageError("servesim capacity is not built yet");
}

}  // namespace servesim::cli
