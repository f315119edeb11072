#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// A folder of shipped JSON files addressed by short name (models/, hw_profiles/, workloads/).
class Catalog {
 public:
  // `kind` names the entries in messages ("model", "hardware profile"); `flag` is the option
  // that took the name ("--model").
  Catalog(std::filesystem::path directory, std::string kind, std::string flag);

  // A name containing '/' or ending in ".json", ".jsonl" or ".csv" (a workload trace) is a
  // path; anything else is a short name, matched case-insensitively against the catalog.
  // Unknown names list the valid ones and the closest ("did you mean").
  std::filesystem::path resolve(std::string_view name_or_path) const;

  // Short names of the shipped entries, sorted.
  std::vector<std::string> names() const;

  const std::filesystem::path& directory() const { return directory_; }

 private:
  std::filesystem::path directory_;
  std::string kind_;
  std::string flag_;
};

// The folder holding models/, hw_profiles/ and workloads/: $SERVESIM_DATA_DIR when set, else
// <executable>/../share/servesim when it exists, else the source tree the binary was built
// from. `environment_value` and `executable` come from the CLI, which alone reads the process
// environment.
std::filesystem::path locate_data_root(const char* environment_value,
                                       const std::filesystem::path& executable);

}  // namespace servesim
