// run --out draws its figures from the records in memory; `servesim plot` draws them from the
// files. The two must write the same data files and scripts, byte for byte.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace {

// The figure data and scripts of a folder (.dat and .gp files), by name.
std::map<std::string, std::string> figure_files(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto extension = entry.path().extension();
    if (extension == ".dat" || extension == ".gp") {
      files[entry.path().filename().string()] = servesim::test::read_file(entry.path());
    }
  }
  return files;
}

}  // namespace

TEST_CASE("a run's figures from memory equal those drawn from its files", "[study][cli]") {
  const servesim::test::ScratchDir dir("run_figures_memory");
  const std::map<std::string, std::vector<std::string>> cases{
      // Rejections and single-token requests leave empty TTFT and TPOT cells.
      {"rejections",
       {"--num-requests", "300", "--rate", "20", "--max-len", "600", "--max-len-policy", "reject"}},
      // Shared prompt prefixes that hit: the hit-rate figure.
      {"prefix_hits", {"--workload", "agentic-coding", "--num-requests", "200", "--rate", "4"}},
      // A disaggregated run: the TTFT-parts figure, from requests.csv's extra columns.
      {"disaggregated", {"--disaggregation", "1p1d", "--num-requests", "100", "--rate", "8"}},
  };
  for (const auto& [name, flags] : cases) {
    INFO(name);
    const auto out = dir.path() / name;
    std::vector<std::string> args{"run", "--out", out.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = servesim::test::run_servesim(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto from_memory = figure_files(out);
    REQUIRE(from_memory.count("latency_cdf.dat") == 1);
    REQUIRE(from_memory.count("timeline.dat") == 1);
    if (std::string(name) == "prefix_hits") CHECK(from_memory.count("prefix_cache_hit_rate.gp"));
    if (std::string(name) == "disaggregated") CHECK(from_memory.count("ttft_breakdown.dat"));
    for (const auto& [file, text] : from_memory)
      std::filesystem::remove(out / file);
    const auto p = servesim::test::run_servesim({"plot", out.string(), "--no-render"});
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    const auto from_files = figure_files(out);
    CHECK(from_files.size() == from_memory.size());
    for (const auto& [file, text] : from_memory) {
      INFO(file);
      REQUIRE(from_files.count(file) == 1);
      CHECK(from_files.at(file) == text);
    }
  }
}
