#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "tests/support/test_support.h"

using namespace servesim;

namespace {

// `text` with every "\n" as "\r\n" (Windows line endings).
std::string with_crlf(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

// summary.json's text of a run of the workload in `path`.
std::string summary_of_workload(const std::filesystem::path& path) {
  const auto r = test::run_servesim({"run", "--workload", path.string(), "--json"});
  INFO(path.filename().string() << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE(
    "traces and workload files saved with Windows line endings or a UTF-8 BOM read as they are",
    "[workload][line_endings]") {
  test::ScratchDir dir("line_endings");
  const std::string bom = "\xEF\xBB\xBF";
  const std::filesystem::path data = test::source_dir() / "tests" / "workload" / "data";
  const std::string spec = R"({
  "arrival": {"process": "poisson", "rate_per_s": 4},
  "lengths": {"distribution": "independent",
              "prompt": {"distribution": "fixed", "tokens": 200},
              "output": {"distribution": "fixed", "tokens": 20}},
  "num_requests": 30
}
)";
  std::ofstream(dir.path() / "spec.json") << spec;
  for (const std::string name :
       {"azure_trace.csv", "plain_trace.csv", "mooncake_trace.jsonl", "spec.json"}) {
    const std::filesystem::path original = name == "spec.json" ? dir.path() / name : data / name;
    const std::string text = test::read_file(original);
    const std::string expected = summary_of_workload(original);
    const auto variant = [&](const std::string& tag, const std::string& content) {
      const auto path = dir.path() / (tag + "_" + name);
      std::ofstream(path, std::ios::binary) << content;
      INFO(tag << " " << name);
      CHECK(summary_of_workload(path) == expected);
    };
    variant("crlf", with_crlf(text));
    variant("bom", bom + text);
    variant("bom_crlf", bom + with_crlf(text));
  }
  // A run configuration (JSON) likewise.
  std::ofstream(dir.path() / "config.json", std::ios::binary)
      << bom + with_crlf(R"({"workload": {"preset": "sharegpt", "num_requests": 20}})"
                         "\n");
  const auto configured =
      test::run_servesim({"run", "--config", (dir.path() / "config.json").string(), "--json"});
  INFO(configured.err);
  CHECK(configured.exit_code == 0);
}
