#include "tests/bad_input/bad_input_support.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sys/stat.h>
#include <catch2/catch.hpp>

#include "tests/bad_input/subprocess.h"
#include "tests/support/test_support.h"

namespace servesim::test::bad_input {

std::string shipped(const std::string& relative_path) {
  std::ifstream in(source_dir() / relative_path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string nested(std::size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

std::vector<std::string> run_with(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  for (const char* extra : {"--out", "out"})
    args.emplace_back(extra);
  return args;
}

std::string patched(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("patched: \"" + from + "\" not found");
  return text.replace(at, from.size(), to);
}

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    std::string text;
    if (entry.is_regular_file()) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::ostringstream buffer;
      buffer << in.rdbuf();
      text = buffer.str();
    }
    files[fs::relative(entry.path(), dir).string()] = text;
  }
  return files;
}

bool write_inputs(const fs::path& dir, const std::vector<InputFile>& files) {
  fs::create_directories(dir);
  for (const auto& file : files) {
    const auto path = dir / file.name;
    switch (file.kind) {
      case Kind::Directory:
        fs::create_directories(path);
        break;
      case Kind::Fifo:
        REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
        break;
      case Kind::Text:
      case Kind::Unreadable:
        std::ofstream(path, std::ios::binary) << file.text;
        if (file.kind == Kind::Unreadable) {
          fs::permissions(path, fs::perms::none);
          std::ifstream probe(path);
          if (probe) return false;  // root reads anything: this case cannot be staged here
        }
        break;
    }
  }
  return true;
}

void check_cases(const std::string& scratch_name, const std::vector<BadInputCase>& all) {
  const servesim::test::ScratchDir scratch(scratch_name);
  int index = 0;
  for (const auto& c : all) {
    const fs::path dir = scratch.path() / ("case" + std::to_string(index++));
    DYNAMIC_SECTION(c.name) {
      if (!write_inputs(dir, c.files)) {
        WARN("skipped \"" << c.name << "\": files cannot be made unreadable to this user");
        continue;
      }
      const auto before = snapshot(dir);
      const auto result = run_executable(SERVESIM_EXECUTABLE, c.args, dir, kTimeLimitS);
      INFO("stderr: " << result.err);
      REQUIRE_FALSE(result.timed_out);
      REQUIRE(result.signal == 0);
      CHECK(result.exit_code == c.exit_code);
      // Exactly one line, the error.
      CHECK(result.err.rfind("servesim: error: ", 0) == 0);
      CHECK(result.err.find('\n') == result.err.size() - 1);
      for (const auto& expected : c.expect)
        CHECK_THAT(result.err, Catch::Matchers::Contains(expected));
      // No partial output: the folder holds exactly what the case put there.
      CHECK(snapshot(dir) == before);
    }
  }
}

}  // namespace servesim::test::bad_input
