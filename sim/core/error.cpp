#include "sim/core/error.h"

namespace servesim {

int exit_code_for(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Usage:
      return 2;
    case ErrorKind::Input:
      return 3;
    case ErrorKind::Infeasible:
      return 4;
    case ErrorKind::Internal:
      return 5;
  }
  return 5;
}

}  // namespace servesim
