// A short, deterministic run of the fuzz targets' seed corpora, in the normal test suite: every
// seed must be accepted, and truncations and byte flips of it must be accepted or refused with
// a servesim::Error, never crash or throw anything else.
#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/fuzz/fuzz_targets.h"
#include "tests/support/test_support.h"

namespace {

using Entry = bool (*)(std::string_view);

std::vector<std::pair<std::string, std::string>> corpus(const std::string& target,
                                                        const std::string& folder = "corpus") {
  std::vector<std::pair<std::string, std::string>> files;
  const auto dir = servesim::test::source_dir() / "tests" / "fuzz" / folder / target;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    files.emplace_back(entry.path().filename().string(), text.str());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Truncations at 16 points, and 64 copies with 1-4 bytes overwritten by bytes that upset
// parsers most (quotes, braces, digits, NUL, high bytes, line ends) or by random ones.
std::vector<std::string> mutants(const std::string& seed, std::mt19937_64& rng) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < 16; ++i)
    out.push_back(seed.substr(0, seed.size() * i / 16));
  static constexpr char kSpecialBytes[] = "\"{}[],:.-+eE019\0\xff\xc3\r\n";
  constexpr std::string_view kSpecial{kSpecialBytes, sizeof kSpecialBytes - 1};
  for (int copy = 0; copy < 64 && !seed.empty(); ++copy) {
    std::string text = seed;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const std::size_t at = rng() % text.size();
      text[at] = rng() % 2 == 0 ? kSpecial[rng() % kSpecial.size()] : static_cast<char>(rng());
    }
    out.push_back(std::move(text));
  }
  return out;
}

void smoke(const std::string& target, Entry entry) {
  std::mt19937_64 rng(0x5eed);
  const auto seeds = corpus(target);
  REQUIRE(seeds.size() >= 4);
  std::size_t accepted = 0;
  std::size_t refused = 0;
  for (const auto& [name, text] : seeds) {
    INFO(target << " seed " << name);
    bool ok = false;
    REQUIRE_NOTHROW(ok = entry(text));
    CHECK(ok);
    for (const auto& mutant : mutants(text, rng)) {
      INFO("mutant of " << mutant.size() << " bytes");
      REQUIRE_NOTHROW(ok = entry(mutant));
      ++(ok ? accepted : refused);
    }
  }
  // Both outcomes occur, so the mutations reach past the first parse error.
  CHECK(accepted > 0);
  CHECK(refused > 0);
  // Inputs the fuzzers found that a reader wrongly accepted (tests/fuzz/findings/<target>/):
  // now refused with a servesim::Error. (A finding that is now accepted is a seed instead.)
  for (const auto& [name, text] : corpus(target, "findings")) {
    INFO(target << " finding " << name);
    bool ok = true;
    REQUIRE_NOTHROW(ok = entry(text));
    CHECK_FALSE(ok);
  }
}

}  // namespace

TEST_CASE("Fuzz corpus smoke: config loader", "[fuzz]") {
  smoke("config_loader", &servesim::fuzz::load_config_text);
}

TEST_CASE("Fuzz corpus smoke: trace reader", "[fuzz]") {
  smoke("trace_reader", &servesim::fuzz::load_trace_text);
}

TEST_CASE("Fuzz corpus smoke: model loader", "[fuzz]") {
  smoke("model_loader", &servesim::fuzz::load_model_text);
}

TEST_CASE("Fuzz corpus smoke: hardware profile", "[fuzz]") {
  smoke("hardware_profile", &servesim::fuzz::load_hardware_text);
}

TEST_CASE("Fuzz corpus smoke: engine profile", "[fuzz]") {
  smoke("engine_profile", &servesim::fuzz::load_engine_text);
}

TEST_CASE("Fuzz corpus smoke: workload spec", "[fuzz]") {
  smoke("workload_spec", &servesim::fuzz::load_workload_text);
}

TEST_CASE("Fuzz corpus smoke: bench result", "[fuzz]") {
  smoke("bench_result", &servesim::fuzz::load_bench_result_text);
}

TEST_CASE("Fuzz corpus smoke: serving csv", "[fuzz]") {
  smoke("serving_csv", &servesim::fuzz::load_serving_csv_text);
}

TEST_CASE("Fuzz corpus smoke: point journal", "[fuzz]") {
  smoke("point_journal", &servesim::fuzz::load_journal_text);
}
