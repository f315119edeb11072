#include "sim/app/output_directory.h"

#include <unistd.h>

#include <string>

#include "sim/core/error.h"

namespace servesim {

namespace fs = std::filesystem;

fs::path output_folder(const fs::path& out_dir) {
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
    // journal.jsonl: a study interrupted under servesim before its journal moved beside
    // the folder.
    if (!fs::is_empty(target, ec) && !fs::exists(target / "summary.json", ec) &&
        !fs::exists(target / "journal.jsonl", ec)) {
      throw InputError(out_dir.string(),
                       "is a non-empty directory that holds no servesim run; "
                       "refusing to replace it (--out)");
    }
  }
  return target;
}

void publish_output(const fs::path& out_dir,
                    const std::function<void(const fs::path& staging)>& write) {
  std::error_code ec;
  const fs::path target = output_folder(out_dir);
  const std::string suffix = "-" + std::to_string(::getpid());
  const fs::path staging =
      target.parent_path() / ("." + target.filename().string() + ".partial" + suffix);
  fs::remove_all(staging, ec);
  if (!fs::create_directories(staging, ec) || ec) {
    throw InputError(staging.parent_path().string(),
                     "cannot create the output directory: " + ec.message());
  }
  try {
    write(staging);
    // The previous folder is moved aside, not deleted, until the new one is in its place: a
    // rename that fails puts it back.
    const fs::path previous =
        target.parent_path() / ("." + target.filename().string() + ".previous" + suffix);
    const bool replaces = fs::exists(target, ec);
    if (replaces) {
      fs::remove_all(previous, ec);
      fs::rename(target, previous);
    }
    try {
      fs::rename(staging, target);
    } catch (...) {
      if (replaces) fs::rename(previous, target, ec);
      throw;
    }
    if (replaces) fs::remove_all(previous, ec);
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

void check_output_file(const std::string& flag, const fs::path& path) {
  std::error_code ec;
  if (path.empty()) throw InputError(flag, "expected a file path, got an empty string");
  if (fs::is_directory(path, ec)) {
    throw InputError(flag, "\"" + path.string() + "\" is a directory (expected a file path)");
  }
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    throw InputError(flag, "folder \"" + folder.string() + "\" of \"" + path.string() +
                               "\" does not exist (create it first)");
  }
}

}  // namespace servesim
