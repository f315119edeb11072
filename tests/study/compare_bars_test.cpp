// compare's latency bars: a log axis with each bar's value written on it when a panel's values
// span more than 30x, a linear axis from 0 otherwise; each panel its own palette colour.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/test_support.h"

using Catch::Matchers::Contains;

namespace {

// The first format's part of a figure script (the only one by default) cut into its panels, each
// from the axis settings before its "set title" to its plot command.
std::vector<std::string> first_panels(const std::string& script) {
  const std::string part = script.substr(0, script.find("\nreset\n", script.find("set terminal")));
  std::vector<std::string> panels;
  std::size_t start = part.find("logscale y");
  while (start != std::string::npos) {
    const std::size_t next = part.find("logscale y", part.find("plot ", start));
    panels.push_back(part.substr(start, next == std::string::npos ? next : next - start));
    start = next;
  }
  return panels;
}

}  // namespace

TEST_CASE("compare's bars take a log axis and value labels when values span more than 30x",
          "[study][cli]") {
  const servesim::test::ScratchDir dir("compare_bars");
  const auto out = dir.path() / "cmp";
  // A static batcher at 30 req/s queues for seconds where vLLM answers in tens of ms; their
  // TPOTs stay within a factor of 2.
  const auto r = servesim::test::run_servesim({"compare", "--policies",
                                               "vllm:paged,static:contiguous:max", "--rate", "30",
                                               "--num-requests", "300", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto panels = first_panels(servesim::test::read_file(out / "latency_bars.gp"));
  REQUIRE(panels.size() == 3);
  INFO(panels[0]);
  CHECK_THAT(panels[0], Contains("Mean TTFT") && Contains("set yrange [*:*]") &&
                            Contains("with labels") && Contains("using 1:3:($3 >= 1000 ?") &&
                            Contains("lc rgb \"#0072B2\""));
  CHECK(panels[0].rfind("unset", 0) == std::string::npos);  // "logscale y" set, not unset
  CHECK_THAT(panels[1], Contains("Mean TPOT") && Contains("set yrange [0:*]") &&
                            Contains("lc rgb \"#D55E00\""));
  CHECK(panels[1].find("with labels") == std::string::npos);
}
