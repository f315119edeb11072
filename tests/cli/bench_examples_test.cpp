#include <catch2/catch.hpp>

#include <sstream>

#include "tests/support/test_support.h"

using namespace servesim;

namespace {

using Args = std::vector<std::string>;

// A command line's words, split at spaces outside single quotes (the quotes removed).
Args shell_words(const std::string& line) {
  Args words;
  std::string word;
  bool quoted = false;
  bool any = false;
  for (const char c : line) {
    if (c == '\'') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) words.push_back(word);
      word.clear();
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) words.push_back(word);
  return words;
}

// The lines of docs/configuration.md's ```bench-examples block.
std::vector<std::string> example_lines() {
  std::istringstream doc(test::read_file(test::source_dir() / "docs" / "configuration.md"));
  std::vector<std::string> lines;
  bool in_block = false;
  for (std::string line; std::getline(doc, line);) {
    if (line == "```bench-examples") {
      in_block = true;
    } else if (in_block && line == "```") {
      break;
    } else if (in_block && !line.empty()) {
      lines.push_back(line);
    }
  }
  return lines;
}

std::string summary(Args args) {
  args.push_back("--json");
  const auto r = test::run_servesim(args);
  INFO(Catch::Detail::stringify(args) << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("docs/configuration.md's vllm bench serve lines run unchanged, as their servesim twins",
          "[cli][vllm_bench][docs]") {
  const auto lines = example_lines();
  REQUIRE(lines.size() == 8);
  for (std::size_t i = 0; i + 1 < lines.size(); i += 2) {
    const Args vllm = shell_words(lines[i]);
    const Args ours = shell_words(lines[i + 1]);
    INFO(lines[i]);
    REQUIRE(Args(vllm.begin(), vllm.begin() + 3) == Args{"vllm", "bench", "serve"});
    REQUIRE(Args(ours.begin(), ours.begin() + 2) == Args{"servesim", "run"});
    Args as_run = {"run"};
    as_run.insert(as_run.end(), vllm.begin() + 3, vllm.end());
    CHECK(summary(as_run) == summary(Args(ours.begin() + 1, ours.end())));
  }
}
