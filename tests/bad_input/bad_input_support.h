#pragma once

// The harness of the bad-input tests: a case's input files, the command it runs, the exit code
// and the error text it expects, and the check that the real servesim executable gives exactly
// one error line and leaves its folder as it found it.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace servesim::test::bad_input {

namespace fs = std::filesystem;

inline constexpr int kUsage = 2;
inline constexpr int kInput = 3;
inline constexpr int kInfeasible = 4;
inline constexpr int kTimeLimitS = 20;

enum class Kind { Text, Directory, Fifo, Unreadable };

struct InputFile {
  std::string name;
  std::string text;
  Kind kind = Kind::Text;
};

struct BadInputCase {
  std::string name;
  std::vector<InputFile> files;  // written into the case's scratch folder, the working dir
  std::vector<std::string> args;
  int exit_code;
  std::vector<std::string> expect;  // substrings of the error line
};

// `text` with its one occurrence of `from` replaced by `to`.
std::string patched(std::string text, const std::string& from, const std::string& to);

// Snapshot of a folder's files and contents, to check an error left it untouched.
std::map<std::string, std::string> snapshot(const fs::path& dir);

// Writes a case's files; false when one cannot be staged here (root reads unreadable files).
bool write_inputs(const fs::path& dir, const std::vector<InputFile>& files);

// A shipped file's text (relative to the source tree): models/, hw_profiles/, engines/.
std::string shipped(const std::string& relative_path);
inline std::string llama() {
  return shipped("models/llama-3-8b.json");
}
inline std::string h200() {
  return shipped("hw_profiles/h200.json");
}
inline std::string vllm_engine() {
  return shipped("engines/vllm.json");
}

// JSON nested `levels` deep: [[[...]]].
std::string nested(std::size_t levels);

// `servesim run ARGS --out out`.
std::vector<std::string> run_with(std::vector<std::string> args);

// Runs every case in a scratch folder of its own and checks the error contract.
void check_cases(const std::string& scratch_name, const std::vector<BadInputCase>& all);

}  // namespace servesim::test::bad_input
