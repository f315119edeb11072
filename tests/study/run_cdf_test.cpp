// The run's latency CDF keeps readable ticks at any range: seconds once the slowest request
// reaches 10 s, a log axis when the values span more than 30x, and a 1-2-5 tick step otherwise.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_support.h"

using Catch::Matchers::Contains;

TEST_CASE("the latency CDF switches to seconds, a log axis and round tick steps by its range",
          "[study][cli]") {
  const servesim::test::ScratchDir dir("run_cdf");
  const auto out = dir.path() / "run";
  // A static batcher at 30 req/s: first tokens from tens of ms to minutes, TPOTs within 5%.
  const auto r = servesim::test::run_servesim({"run", "--scheduler", "static", "--rate", "30",
                                               "--num-requests", "300", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string script = servesim::test::read_file(out / "latency_cdf.gp");
  // The first format's half of the script (one format by default).
  const std::string panels =
      script.substr(0, script.find("\nreset\n", script.find("set terminal")));
  const auto tpot = panels.find("set xlabel \"TPOT");
  REQUIRE(tpot != std::string::npos);
  const std::string ttft_panel = panels.substr(0, tpot);
  const std::string tpot_panel = panels.substr(panels.rfind("unset logscale x", tpot));
  CHECK_THAT(ttft_panel, Contains("set logscale x") && Contains("TTFT (s, log scale)"));
  CHECK_THAT(tpot_panel, Contains("TPOT (ms)") && Contains("set xtics 0.0"));
  // Every figure's ticks in plain digits (1000000, not gnuplot's 1e+06).
  CHECK_THAT(panels, Contains("set format x \"%.10g\"\nset format y \"%.10g\""));
  CHECK_THAT(servesim::test::read_file(out / "latency_cdf.dat"),
             Contains("# TTFT (s) and cumulative share of completed requests, then TPOT (ms)"));
}
