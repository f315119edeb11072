#include "tests/support/test_support.h"

namespace servesim::test {

// The only file compiled with the checkout's path, so that the other objects do not depend
// on where the checkout is (a compiler cache shares them between checkouts).
std::filesystem::path source_dir() {
  return SERVESIM_TEST_SOURCE_DIR;
}

}  // namespace servesim::test
