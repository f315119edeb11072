#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/command.h"
#include "sim/engine/engine_profile.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/hardware/impl/roofline_model.h"
#include "sim/model/model_loader.h"

namespace servesim::test {

// A decode-only batch of `sequences` sequences of `context` tokens each.
inline BatchShape decode_batch(std::int64_t sequences, std::int64_t context) {
  BatchShape shape;
  for (std::int64_t i = 0; i < sequences; ++i)
    shape.add_decode(context);
  return shape;
}

// One prompt of `tokens` tokens, nothing cached.
inline BatchShape prefill_batch(std::int64_t tokens) {
  BatchShape shape;
  shape.add_prefill(tokens, 0);
  return shape;
}

// The repository root (models/, hw_profiles/) and the shared reference data beside it.
std::filesystem::path source_dir();
inline std::filesystem::path shared_data_dir() {
  return source_dir() / ".." / "shared" / "data";
}
// A path under the shared data, or nothing (with a warning that the test is skipped) where it
// is absent: `if (!file) return;` skips a test that reads it.
inline std::optional<std::filesystem::path> shared_data_path(const std::string& relative) {
  const std::filesystem::path path = shared_data_dir() / relative;
  if (std::filesystem::exists(path)) return path;
  WARN("shared data absent (" << path.string() << "): skipped");
  return std::nullopt;
}

inline ModelSpec shipped_model(const std::string& name) {
  return load_model_file(source_dir() / "models" / (name + ".json"));
}
inline HardwareProfile shipped_hardware(const std::string& name) {
  return load_hardware_file(source_dir() / "hw_profiles" / (name + ".json"));
}

inline EngineProfile shipped_engine(const std::string& name) {
  return load_engine_file(source_dir() / "engines" / (name + ".json"));
}

// `servesim ARGS...` run in-process against the source tree's data.
struct CliResult {
  int exit_code;
  std::string out;
  std::string err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

inline CliResult run_servesim(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = cli::run_cli(args, out, err, source_dir());
  return {code, out.str(), err.str()};
}

// A whole file as bytes; fails the test when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every cell of one column of a simple CSV (no quoted commas), in row order; fails the test
// when the column is absent.
inline std::vector<std::string> csv_column(const std::filesystem::path& path,
                                           const std::string& column) {
  std::istringstream in(read_file(path));
  std::string header;
  std::getline(in, header);
  std::stringstream h(header);
  std::size_t index = 0;
  for (std::string name; std::getline(h, name, ','); ++index) {
    if (name != column) continue;
    std::vector<std::string> cells;
    for (std::string row; std::getline(in, row);) {
      std::stringstream r(row);
      std::string cell;
      for (std::size_t k = 0; k <= index; ++k)
        std::getline(r, cell, ',');
      cells.push_back(cell);
    }
    return cells;
  }
  FAIL("no column " << column << " in " << path);
  return {};
}

// One cell of the first data row of a CSV (requests.csv of a one-request run, the first row
// of iterations.csv); fails the test when the column is absent or there is no row.
inline std::string first_csv_cell(const std::filesystem::path& path, const std::string& column) {
  const std::vector<std::string> cells = csv_column(path, column);
  REQUIRE_FALSE(cells.empty());
  return cells.front();
}

// A CLI error is one line on stderr with the exit code of its class, naming what was wrong
// (`needle`), and nothing on stdout.
inline void require_error(const CliResult& r, int code, const std::string& needle) {
  INFO(r.err);
  REQUIRE(r.exit_code == code);
  REQUIRE(r.out.empty());
  REQUIRE_THAT(r.err, Catch::Matchers::Contains(needle));
  REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

// A scratch folder of its own per test process, removed on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("servesim_test_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::filesystem::path write(const std::string& file, const std::string& text) const {
    const auto path = path_ / file;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace servesim::test
