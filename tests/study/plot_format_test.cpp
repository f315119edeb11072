// --plot-format: the files each figure renders to.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>

#include "sim/core/error.h"
#include "sim/study/gnuplot.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("plot formats parse from a list of png, svg and pdf", "[study][plot]") {
  CHECK(parse_plot_formats("pdf", "--plot-format") == PlotFormats{PlotFormat::Pdf});
  CHECK(parse_plot_formats("svg,png", "--plot-format") ==
        PlotFormats{PlotFormat::Svg, PlotFormat::Png});
  CHECK_THROWS_WITH(parse_plot_formats("png,png", "--plot-format"),
                    Contains("--plot-format: expected a list of png, svg and pdf, each once"));
  CHECK_THROWS_AS(parse_plot_formats("eps", "--plot-format"), UsageError);
  CHECK_THROWS_AS(parse_plot_formats("", "--plot-format"), UsageError);
}

TEST_CASE("run --plot-format renders the formats asked for and no others", "[study][cli]") {
  const test::ScratchDir dir("plot_format");
  const auto out = dir.path() / "run";
  const auto r = test::run_servesim(
      {"run", "--num-requests", "60", "--plot-format", "pdf,png", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* figure : {"latency_cdf", "kv_memory", "batch_size"}) {
    INFO(figure);
    const std::string stem = std::string(figure);
    CHECK(test::read_file(out / (stem + ".pdf")).rfind("%PDF", 0) == 0);
    CHECK(std::filesystem::exists(out / (stem + ".png")));
    CHECK_FALSE(std::filesystem::exists(out / (stem + ".svg")));
    CHECK_THAT(test::read_file(out / (stem + ".gp")), Contains("set terminal pdfcairo"));
  }
  const auto bad = test::run_servesim({"sweep", "--grid", "rate=1,2", "--plot-format", "jpg"});
  test::require_error(bad, 2, "--plot-format: expected a list of png, svg and pdf");
}

TEST_CASE("figures render in one gnuplot, and a script gnuplot refuses is named", "[study][plot]") {
  const test::ScratchDir dir("render_together");
  std::ostringstream warnings;
  const Figure good{"good", "plot x title \"x\"\n"};
  const Figure also{"also_good", "plot x * x title \"x squared\"\n"};
  for (const Figure& figure : {good, also})
    write_figure_script(dir.path(), figure);
  if (!render_figures(dir.path(), {good, also}, warnings)) {
    WARN("gnuplot is not installed: nothing rendered");
    return;
  }
  CHECK(std::filesystem::exists(dir.path() / "good.svg"));
  CHECK(std::filesystem::exists(dir.path() / "also_good.svg"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "good.png"));  // only when asked

  const Figure broken{"broken", "plot this is not gnuplot\n"};
  write_figure_script(dir.path(), broken);
  CHECK_THROWS_WITH(render_figures(dir.path(), {good, broken, also}, warnings),
                    Contains("broken.gp: gnuplot failed to render it"));
}
