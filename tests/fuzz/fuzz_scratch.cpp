#include "tests/fuzz/fuzz_scratch.h"

#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace servesim::fuzz {
namespace {

namespace fs = std::filesystem;

class ScratchFolder {
 public:
  ScratchFolder()
      : path_(fs::temp_directory_path() /
              ("servesim-fuzz-" + std::to_string(static_cast<long long>(::getpid())))) {
    std::error_code ec;
    fs::remove_all(path_, ec);  // left by a crashed process that had this id
    fs::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

const fs::path& scratch_folder() {
  static const ScratchFolder folder;
  return folder.path();
}

fs::path write_scratch_file(const fs::path& name, std::string_view text) {
  const fs::path path = scratch_folder() / name;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  // Not a servesim::Error: a scratch file that cannot be written is the harness's fault.
  if (!out) throw std::runtime_error("fuzz: cannot write " + path.string());
  return path;
}

const fs::path& stub_data_root() {
  static const fs::path root = [] {
    for (const auto& [model, hf_id] : {std::pair{"llama-2-7b", "meta-llama/Llama-2-7b-hf"},
                                       std::pair{"llama-3-8b", "meta-llama/Meta-Llama-3-8B"},
                                       std::pair{"opt-13b", "facebook/opt-13b"}}) {
      write_scratch_file(fs::path("data") / "models" / (std::string(model) + ".json"),
                         "{\"_name_or_path\": \"" + std::string(hf_id) + "\"}\n");
    }
    for (const char* hardware : {"h100-sxm", "a100-40gb", "h200"}) {
      write_scratch_file(fs::path("data") / "hw_profiles" / (std::string(hardware) + ".json"),
                         "{}\n");
    }
    return scratch_folder() / "data";
  }();
  return root;
}

}  // namespace servesim::fuzz
