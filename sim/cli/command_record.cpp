#include <string>

#include <nlohmann/json.hpp>

#include "sim/cli/command.h"
#include "sim/core/version.h"
#include "sim/metrics/output_file.h"

namespace servesim::cli {
namespace {

// `word` as one word of a POSIX shell command line.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789-_=.,:/@%+") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (const char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

void write_command_record(const std::filesystem::path& dir, const CommandContext& context) {
  std::string line = "servesim " + std::string(context.name);
  nlohmann::json argv = nlohmann::json::array({"servesim", context.name});
  for (const auto& arg : context.args) {
    line += ' ' + shell_word(arg);
    argv.push_back(arg);
  }
  const nlohmann::json record{
      {"servesim_version", std::string(servesim_version())}, {"command", line}, {"argv", argv}};
  const auto path = dir / "command.json";
  auto out = open_output_file(path);
  out << record.dump(2) << '\n';
  close_output_file(out, path);
}

}  // namespace servesim::cli
