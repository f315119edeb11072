#include "sim/cli/command.h"
#include "sim/core/error.h"

namespace servesim::cli {

int run_validate(CommandContext& /*context*/) {
  throw UsageError("servesim validate is not built yet");
}

}  // namespace servesim::cli
