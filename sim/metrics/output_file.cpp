#include "sim/metrics/output_file.h"

#include <system_error>

#include "sim/core/error.h"

namespace servesim {

std::ofstream open_output_file(const std::filesystem::path& path) {
  if (path.has_parent_path()) {
    // A failure here surfaces as the open failure below, which names the file.
    std::error_code ignored;
    std::filesystem::create_directories(path.parent_path(), ignored);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path.string(), "cannot open the file for writing");
  return out;
}

void close_output_file(std::ofstream& out, const std::filesystem::path& path) {
  out.flush();
  out.close();
  if (!out) throw InputError(path.string(), "writing the file failed");
}

}  // namespace servesim
