#pragma once

#include <filesystem>
#include <optional>
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
  // A Hugging Face id ("meta-llama/Llama-2-7b-hf": one '/', no such file) names the entry
  // whose "_name_or_path" key (config.json's own field) is that id, in any case, so measured
  // data and vLLM commands that name models by their hub id find the shipped file.
  std::filesystem::path resolve(std::string_view name_or_path) const;

  // Short names of the shipped entries, sorted.
  std::vector<std::string> names() const;

  // The entry whose "_name_or_path" is `hf_id` (case-insensitive), if any.
  std::optional<std::filesystem::path> find_by_hf_id(std::string_view hf_id) const;

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
