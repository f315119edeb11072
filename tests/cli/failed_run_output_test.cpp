// A run that fails leaves the previous outputs exactly as they were: every command that
// writes files (run --out and --save-result, compare, sweep, capacity, report --output,
// calibrate --out) is run once to succeed, then made to fail in each way it can, and the
// whole folder (hidden files included: no staging folder or journal left over) is compared
// byte for byte with what it held before.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/bad_input/bad_input_support.h"
#include "tests/support/test_support.h"

namespace {

namespace fs = std::filesystem;
using servesim::test::CliResult;
using servesim::test::run_servesim;
using servesim::test::bad_input::snapshot;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Runs `args`, which must fail with `code` naming `needle`, and checks `dir` is unchanged.
void fails_leaving(const fs::path& dir, const std::vector<std::string>& args, int code,
                   const std::string& needle) {
  const auto before = snapshot(dir);
  const CliResult r = run_servesim(args);
  INFO("servesim " << args.front() << " ... -> " << r.exit_code << ": " << r.err);
  CHECK(r.exit_code == code);
  CHECK_THAT(r.err, Catch::Contains("servesim: error: ") && Catch::Contains(needle));
  CHECK(snapshot(dir) == before);
}

void succeeds(const std::vector<std::string>& args) {
  const CliResult r = run_servesim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("a failed run leaves the previous --out and --save-result as they were",
          "[cli][outputs]") {
  const servesim::test::ScratchDir scratch("failed_run_output");
  const fs::path dir = scratch.path();
  const std::string out = (dir / "out").string(), result = (dir / "r.json").string();
  const std::vector<std::string> run{"run", "--num-requests", "5", "--no-plots", "--out", out};
  succeeds(with(run, {"--save-result", result}));
  REQUIRE(fs::exists(dir / "out" / "summary.json"));
  // --save-result is checked before anything runs, and written before --out is replaced.
  fails_leaving(dir, with(run, {"--save-result", (dir / "missing" / "r.json").string()}), 3,
                "--save-result: folder \"" + (dir / "missing").string() + "\"");
  fails_leaving(dir, with(run, {"--save-result", dir.string()}), 3, "is a directory");
  fails_leaving(dir, with(run, {"--save-result", "/proc/r.json"}), 3, "/proc/r.json");
  // Bad input, and a run that cannot be served.
  fails_leaving(dir, with(run, {"--save-result", result, "--model", "nonexistent"}), 3,
                "unknown model");
  fails_leaving(dir,
                with(run, {"--save-result", result, "--model", "llama-3.1-405b", "--hw", "l40s"}),
                4, "does not fit");
}

TEST_CASE("a failed compare leaves the previous --out as it was", "[cli][outputs]") {
  const servesim::test::ScratchDir scratch("failed_compare_output");
  const fs::path dir = scratch.path();
  const std::vector<std::string> compare{"compare",    "--num-requests", "5",
                                         "--no-plots", "--out",          (dir / "out").string()};
  succeeds(with(compare, {"--policies", "vllm:paged,orca:paged"}));
  fails_leaving(dir,
                with(compare, {"--policies", "vllm:paged,orca:paged", "--model", "llama-3.1-405b",
                               "--hw", "l40s"}),
                4, "no policy fits");
  fails_leaving(dir, with(compare, {"--policies", "vllm:paged,nonexistent:paged"}), 3,
                "nonexistent");
}

TEST_CASE("a failed sweep leaves the previous --out as it was, and checks every point first",
          "[cli][outputs][study]") {
  const servesim::test::ScratchDir scratch("failed_sweep_output");
  const fs::path dir = scratch.path();
  const std::vector<std::string> sweep{"sweep",      "--num-requests", "5",
                                       "--no-plots", "--out",          (dir / "out").string()};
  succeeds(with(sweep, {"--grid", "rate=1,2"}));
  const auto journal = dir / ".out.journal";
  // Point 1's model, or point 1's trace, is refused before point 0 runs.
  fails_leaving(dir, with(sweep, {"--grid", "rate=1,2", "--grid", "model=llama-3-8b,nonexistent"}),
                3, "grid point 1 (rate=1, model=nonexistent): model: unknown model");
  const fs::path inputs = dir / "inputs";
  fs::create_directories(inputs);
  const std::string spec = R"({"arrival": {"process": "trace"}, "lengths": {"distribution":
      "trace"}, "trace": {"path": "TRACE"}})";
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(inputs / name, std::ios::binary) << text;
    return (inputs / name).string();
  };
  const std::string good =
      write("good.csv", "arrival_time_s,prompt_tokens,output_tokens\n0,8,8\n1,8,8\n");
  const std::string bad =
      write("bad.csv", "arrival_time_s,prompt_tokens,output_tokens\n1,8,8\n0,8,8\n");
  const std::string good_spec =
      write("good.json", servesim::test::bad_input::patched(spec, "TRACE", good));
  const std::string bad_spec =
      write("bad.json", servesim::test::bad_input::patched(spec, "TRACE", bad));
  fails_leaving(dir, with(sweep, {"--grid", "workload=" + good_spec + "," + bad_spec}), 3,
                "bad.csv:3");
  // No point fits: no files, and the previous ones kept.
  fails_leaving(dir,
                with(sweep, {"--grid", "rate=1,2", "--model", "llama-3.1-405b", "--hw", "l40s"}), 4,
                "no grid point fits");
  fails_leaving(dir, with(sweep, {"--grid", "rate=1,2", "--x", "bogus"}), 3, "--x");
  CHECK_FALSE(fs::exists(journal));
}

TEST_CASE("a failed capacity search leaves the previous --out as it was, refusing its flags first",
          "[cli][outputs][study]") {
  const servesim::test::ScratchDir scratch("failed_capacity_output");
  const fs::path dir = scratch.path();
  // Short requests, so that 200 of them settle; every rate up to 8 req/s meets the SLO.
  const std::vector<std::string> capacity{
      "capacity", "--slo",           "ttft_p99=5", "--num-requests",      "200", "--rate",
      "4",        "--prompt-tokens", "128",        "--output-tokens",     "16",  "--max-rate",
      "8",        "--no-plots",      "--out",      (dir / "out").string()};
  succeeds(capacity);
  fails_leaving(dir, with(capacity, {"--precision", "-1"}), 3, "--precision");
  fails_leaving(dir, with(capacity, {"--points-per-round", "0"}), 3, "--points-per-round");
  fails_leaving(dir, with(capacity, {"--start-rate", "-3"}), 3, "--start-rate");
  fails_leaving(dir, with(capacity, {"--target-rate", "5", "--max-replicas", "0"}), 3,
                "--max-replicas");
  fails_leaving(dir, with(capacity, {"--shapes", "h100-sxm:1,nonexistent:1"}), 3,
                "unknown hardware profile");
  fails_leaving(dir, {"capacity", "--slo", "ttft_p99=5", "--resume", (dir / "out").string()}, 3,
                "holds no study journal");
}

TEST_CASE("report --output and calibrate --out refuse a missing folder, creating none",
          "[cli][outputs]") {
  const servesim::test::ScratchDir scratch("failed_report_output");
  const fs::path dir = scratch.path();
  const std::string run = (dir / "run").string(), page = (dir / "page.html").string();
  succeeds({"run", "--num-requests", "5", "--no-plots", "--out", run});
  succeeds({"report", run, "--output", page});
  fails_leaving(dir, {"report", run, "--output", (dir / "missing" / "page.html").string()}, 3,
                "--output: folder \"" + (dir / "missing").string() + "\"");
  fails_leaving(dir, {"report", (dir / "nothing").string(), "--output", page}, 3, "nothing");
  // Checked before the measurements are read (which do not exist either).
  fails_leaving(dir,
                {"calibrate", "--base", "h100-sxm", "--measurements", (dir / "none.json").string(),
                 "--out", (dir / "missing" / "h100.json").string()},
                3, "--out: folder \"" + (dir / "missing").string() + "\"");
}
