#include "sim/core/version.h"

namespace servesim {

std::string_view servesim_version() {
  return SERVESIM_VERSION;
}

}  // namespace servesim
