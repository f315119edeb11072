#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/core/version.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/html_report.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

// A gnuplot-like SVG: an XML prolog, ids defined and referenced.
const char* const kSvg =
    "<?xml version=\"1.0\" encoding=\"utf-8\"  standalone=\"no\"?>\n"
    "<svg viewBox=\"0 0 100 50\" xmlns=\"http://www.w3.org/2000/svg\" "
    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
    "<g id=\"gnuplot_canvas\"><defs><path id='gpPt0' d='M-1,0 h2'/>"
    "<clipPath id=\"gpClip\"><rect width=\"9\" height=\"9\"/></clipPath></defs>"
    "<use xlink:href='#gpPt0' x='3' y='4'/><g clip-path=\"url(#gpClip)\"><text>#gpPt0 "
    "stays</text></g></g></svg>\n";

}  // namespace

TEST_CASE("parse_csv reads back what csv_field writes") {
  const std::string text =
      "a,b,c\r\n" + csv_field("x, \"y\"") + ",2,\n\n" + csv_field("z\nw") + ",,3\n";
  const auto rows = parse_csv(text, "t.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::string>{"a", "b", "c"});
  CHECK(rows[1] == std::vector<std::string>{"x, \"y\"", "2", ""});
  CHECK(rows[2] == std::vector<std::string>{"z\nw", "", "3"});
  CHECK_THROWS_WITH(parse_csv("a,\"b\n", "t.csv"),
                    Contains("t.csv") && Contains("quoted field is not closed"));
}

TEST_CASE("a report inlines every figure, escapes text and loads nothing from elsewhere") {
  const test::ScratchDir dir("html_report_synthetic");
  dir.write("summary.json",
            R"({"ttft_s": {"mean": 0.01, "p50": 0.009, "p90": 0.011, "p99": 0.0123, "max": 0.02},
                "requests_completed": 7, "kv_memory": {"free": 0.75, "token_states": 0.25}})");
  dir.write("resolved_config.json", R"({"model": "<script>alert(1)</script>"})");
  dir.write("latency_cdf.svg", kSvg);
  dir.write("kv_memory.svg", kSvg);
  dir.write("batch_size.png", "\x89PNG");  // four bytes: base64 "iVBORw=="
  dir.write("batch_size.gp", "plot 1\n");
  dir.write("lonely.gp", "plot 1\n");

  const HtmlReport report = html_report(dir.path());
  const std::string& html = report.html;
  CHECK(report.kind == "run");
  CHECK(report.figures == 3);
  CHECK(report.unrendered == std::vector<std::string>{"lonely"});
  CHECK_THAT(html, Contains("Not drawn") && Contains("lonely"));
  // Each SVG's ids and the references to them carry a prefix of their own; text is untouched.
  CHECK(count_of(html, "<?xml") == 0);
  CHECK(count_of(html, "<svg class=\"figure\" role=\"img\"") == 2);
  CHECK_THAT(html, Contains("id='f2-gpPt0'") && Contains("xlink:href='#f2-gpPt0'") &&
                       Contains("url(#f2-gpClip)") && Contains("id=\"f2-gnuplot_canvas\""));
  CHECK_THAT(html, Contains("id='f3-gpPt0'") && Contains("url(#f3-gpClip)"));
  CHECK(count_of(html, "#gpPt0 stays") == 2);
  CHECK(count_of(html, "id='gpPt0'") == 0);
  // The PNG without an SVG comes as a data URI.
  CHECK_THAT(html, Contains("src=\"data:image/png;base64,iVBORw==\""));
  // Text from the folder is escaped; the page runs no script and fetches nothing.
  CHECK_THAT(html, Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK(count_of(html, "<script") == 0);
  CHECK(count_of(html, "src=\"http") + count_of(html, "href=\"http") +
            count_of(html, "href='http") + count_of(html, "@import") ==
        0);
  // The headline: TTFT p99 in ms, the KV shares in percent.
  CHECK_THAT(html, Contains("<td>12.3</td>") && Contains("<td>75</td>"));
  CHECK_THAT(html, Contains("Written by not recorded in the folder") ||
                       Contains("not recorded in the folder"));
  CHECK_THAT(html, Contains("<meta name=\"viewport\""));
}

TEST_CASE("outputs record their command, and the report shows it with the version") {
  const test::ScratchDir dir("html_report_run");
  const std::string out = (dir.path() / "run").string();
  const auto run = test::run_servesim({"run", "--num-requests", "20", "--no-plots", "--out", out});
  REQUIRE(run.exit_code == 0);
  const auto record = nlohmann::json::parse(test::read_file(dir.path() / "run" / "command.json"));
  CHECK(record["command"] == "servesim run --num-requests 20 --no-plots --out " + out);
  CHECK(record["argv"].size() == 7);
  CHECK(record["servesim_version"] == std::string(servesim_version()));

  const auto report = test::run_servesim({"report", out});
  INFO(report.err);
  REQUIRE(report.exit_code == 0);
  CHECK_THAT(report.out, Contains("the run report, 0 figures"));
  CHECK(report.err.empty());
  const std::string html = test::read_file(dir.path() / "run" / "report.html");
  CHECK_THAT(html, Contains("The folder holds no figures"));
  CHECK_THAT(html, Contains("servesim run --num-requests 20 --no-plots --out"));
  CHECK_THAT(html, Contains("Written by servesim " + std::string(servesim_version())));
  CHECK_THAT(html, Contains("resolved_config.json") && Contains("requests.csv"));

  // --output puts the page elsewhere; the folder is left as it was.
  const auto elsewhere = dir.path() / "page.html";
  REQUIRE(test::run_servesim({"report", out, "--output", elsewhere.string()}).exit_code == 0);
  CHECK(test::read_file(elsewhere) == html);
}

TEST_CASE("a capacity search draws its points, and its report shows them with the answer") {
  const test::ScratchDir dir("html_report_capacity");
  const std::string out = (dir.path() / "capacity").string();
  const auto search = test::run_servesim({"capacity", "--slo", "ttft_p99=0.5", "--num-requests",
                                          "100", "--max-points", "6", "--no-plots", "--out", out});
  INFO(search.err);
  REQUIRE(search.exit_code == 0);
  // One row of capacity.dat per point simulated: its rate, and whether it met the SLO.
  const auto rates = test::csv_column(dir.path() / "capacity" / "capacity.csv", "rate_per_s");
  const auto met = test::csv_column(dir.path() / "capacity" / "capacity.csv", "met");
  std::istringstream data(test::read_file(dir.path() / "capacity" / "capacity.dat"));
  std::string line;
  std::getline(data, line);
  CHECK(line == "# x worst_slo_ratio met");
  std::size_t rows = 0;
  for (double x = 0, ratio = 0; data >> x >> ratio >> line; ++rows) {
    REQUIRE(rows < rates.size());
    CHECK(x == std::stod(rates[rows]));
    CHECK(line == met[rows]);
    if (line == "1") CHECK(ratio <= 1);  // a point below 1 misses when it is unstable
  }
  CHECK(rows == rates.size());
  CHECK_THAT(test::read_file(dir.path() / "capacity" / "capacity.gp"),
             Contains("ttft_p99 <= 0.5 s") && Contains("capacity.svg"));

  const HtmlReport report = html_report(dir.path() / "capacity");
  CHECK(report.kind == "capacity");
  CHECK(report.unrendered == std::vector<std::string>{"capacity"});
  CHECK_THAT(report.html, Contains("Points simulated") && Contains("TTFT p99 ms") &&
                              Contains("ITL p99 ms") && Contains("violations"));
  // The console's column names: req/s over the steady state, run req/s over the whole run.
  CHECK_THAT(report.html, Contains("<th>req/s</th><th>run req/s</th><th>offered req/s</th>"
                                   "<th>served %</th>") &&
                              !Contains("steady req/s"));
  CHECK_THAT(report.html, Contains("capacity.csv: " + std::to_string(rates.size()) + " rows"));
}

TEST_CASE("report refuses a folder that holds no servesim output, in one line") {
  const test::ScratchDir dir("html_report_bad");
  test::require_error(test::run_servesim({"report", (dir.path() / "none").string()}), 3,
                      "no such folder");
  test::require_error(test::run_servesim({"report", dir.path().string()}), 3,
                      "holds no summary.json");
  dir.write("summary.json", "{}");
  test::require_error(test::run_servesim({"report", dir.path().string()}), 3,
                      "holds no servesim output");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "report.html"));
}
