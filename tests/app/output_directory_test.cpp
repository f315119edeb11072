// publish_output writes a run's folder in a staging folder beside it and renames it into place:
// nothing is published when the write fails, and the error names the file where the user
// asked for it, not in the staging folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/app/output_directory.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

TEST_CASE("a failed write publishes nothing and names the file in the folder asked for", "[app]") {
  namespace fs = std::filesystem;
  const servesim::test::ScratchDir scratch("output_directory");
  const fs::path out = scratch.path() / "run";
  fs::path seen_staging;
  try {
    servesim::publish_output(out, [&](const fs::path& staging) {
      seen_staging = staging;
      std::ofstream(staging / "summary.json") << "{}";
      throw servesim::InputError((staging / "iterations.csv").string(), "writing the file failed");
    });
    FAIL("no error");
  } catch (const servesim::InputError& e) {
    const std::string message = e.what();
    CHECK(message == (out / "iterations.csv").string() + ": writing the file failed");
    CHECK(message.find(".partial") == std::string::npos);
  }
  CHECK_FALSE(seen_staging.empty());
  CHECK_FALSE(fs::exists(seen_staging));
  CHECK_FALSE(fs::exists(out));

  // A write that succeeds is published whole.
  servesim::publish_output(
      out, [](const fs::path& staging) { std::ofstream(staging / "summary.json") << "{}"; });
  CHECK(servesim::test::read_file(out / "summary.json") == "{}");
}
