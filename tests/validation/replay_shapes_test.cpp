#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"
#include "validation/iterations_csv.h"

using namespace servesim;
namespace sv = servesim::validation;

// iterations.csv carries the sums the cost model priced, so the harness's replay sees the very
// batches the simulator timed: re-pricing every row's shape gives back its duration. Chunked
// prefill mixes prompt chunks with decodes, and bulk decoding (on by default) writes the rows
// of a decode run from one plan, whose contexts grow by one token per iteration.
TEST_CASE("iterations.csv rows re-price to their own durations", "[validation][iterations]") {
  const test::ScratchDir dir("replay_shapes");
  const auto out = dir.path() / "out";
  const auto run =
      test::run_servesim({"run", "--model", "llama-3-8b", "--hw", "h100-sxm", "--scheduler",
                          "sarathi", "--workload", "sharegpt", "--num-requests", "80", "--rate",
                          "20", "--seed", "5", "--out", out.string(), "--no-plots"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  std::ifstream in(out / "iterations.csv", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const sv::IterationsFile file =
      sv::parse_iterations_csv(text.str(), "iterations.csv", std::nullopt);
  REQUIRE(file.exact_shapes);
  REQUIRE(file.rows.size() > 500);

  // The run's cost model: the roofline with the engine's costs as resolved for the run.
  RooflineOptions options;
  const auto resolved = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
  read_engine_costs(resolved.at("engine"), "resolved_config.json", "engine", options.engine);
  const RooflineModel model(test::shipped_model("llama-3-8b"), test::shipped_hardware("h100-sxm"),
                            options);
  int mixed = 0;
  int decode_only = 0;
  for (const sv::IterationRow& row : file.rows) {
    INFO("line " << row.line);
    CHECK(model.estimate(row.shape).total_time_s == Approx(row.predicted_s).margin(1e-9));
    if (row.shape.prefill_sequences > 0 && row.shape.decode_sequences > 0) ++mixed;
    if (row.shape.prefill_sequences == 0) ++decode_only;
  }
  CHECK(mixed > 10);
  CHECK(decode_only > 100);
}
