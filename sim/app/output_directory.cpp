#include "sim/app/output_directory.h"

#include <unistd.h>

#include <string>

#include "sim/core/error.h"

namespace servesim {

void publish_output(const std::filesystem::path& out_dir,
                    const std::function<void(const std::filesystem::path& staging)>& write) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (out_dir.empty()) throw InputError("--out", "expected a folder path, got an empty string");
  // "out/", "./out" and "a/../out" all name the folder "out"; "/" and "." name no new folder.
  fs::path target = fs::absolute(out_dir, ec).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  if (ec || target == target.root_path() || target == fs::current_path(ec)) {
    throw InputError(out_dir.string(), "expected a folder of its own for the output (--out)");
  }
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec)) {
      throw InputError(out_dir.string(), "exists and is not a directory (--out)");
    }
    if (!fs::is_empty(target, ec) && !fs::exists(target / "summary.json", ec)) {
      throw InputError(out_dir.string(),
                       "is a non-empty directory that holds no servesim run; "
                       "refusing to replace it (--out)");
    }
  }
  const fs::path staging = target.parent_path() / ("." + target.filename().string() + ".partial-" +
                                                   std::to_string(::getpid()));
  fs::remove_all(staging, ec);
  if (!fs::create_directories(staging, ec) || ec) {
    throw InputError(staging.parent_path().string(),
                     "cannot create the output directory: " + ec.message());
  }
  try {
    write(staging);
    fs::remove_all(target, ec);
    fs::rename(staging, target);
  } catch (const fs::filesystem_error& error) {
    fs::remove_all(staging, ec);
    throw InputError(out_dir.string(), std::string("cannot write the output: ") + error.what());
  } catch (const InputError& error) {
    fs::remove_all(staging, ec);
    // A file that failed to write is named where it was to be published, not in the staging
    // folder the user never sees.
    std::string message = error.what();
    const std::string hidden = staging.string(), shown = target.string();
    for (auto at = message.find(hidden); at != std::string::npos;
         at = message.find(hidden, at + shown.size())) {
      message.replace(at, hidden.size(), shown);
    }
    throw InputError("", message);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
}

}  // namespace servesim
